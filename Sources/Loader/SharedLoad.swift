import Fetch

/// One network load shared by every caller that asks for the same URL while
/// it runs (request coalescing, as Nuke does it: a map from key to the task
/// in flight).
///
/// Each waiter resumes exactly once: with the result, or with `cancelled`
/// when its own task is cancelled (which never cancels the others'). When
/// the last waiter leaves, the load itself is cancelled.
final class SharedLoad: @unchecked Sendable {
    private let lock = Lock()
    private var result: Phase?
    private var waiters: [UInt64: CheckedContinuation<Phase, Never>] = [:]
    private var cancelledEarly: Set<UInt64> = []
    private var nextID: UInt64 = 0
    private var task: Task<Void, Never>?
    private let url: String

    init(url: String) { self.url = url }

    func start(_ work: @escaping @Sendable () async -> Phase, onDone: @escaping @Sendable () -> Void) {
        let task = Task {
            let phase = await work()
            onDone()
            self.complete(phase)
        }
        lock.withLock { self.task = task }
    }

    func wait() async -> Phase {
        let id = lock.withLock { () -> UInt64 in nextID += 1; return nextID }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Phase, Never>) in
                let immediate = lock.withLock { () -> Phase? in
                    if let result { return result }
                    if cancelledEarly.remove(id) != nil { return Self.cancelled(url) }
                    waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let (continuation, cancelLoad) = lock.withLock { () -> (CheckedContinuation<Phase, Never>?, Task<Void, Never>?) in
                guard result == nil else { return (nil, nil) }
                let continuation = waiters.removeValue(forKey: id)
                if continuation == nil { cancelledEarly.insert(id) }
                return (continuation, waiters.isEmpty ? task : nil)
            }
            continuation?.resume(returning: Self.cancelled(url))
            cancelLoad?.cancel()
        }
    }

    private func complete(_ phase: Phase) {
        let waiting = lock.withLock { () -> [CheckedContinuation<Phase, Never>] in
            result = phase
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for continuation in waiting { continuation.resume(returning: phase) }
    }

    static func cancelled(_ url: String) -> Phase {
        .failure(LoadError(kind: .cancelled, message: "cancelled"))
    }
}
