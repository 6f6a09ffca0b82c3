import Fetch

/// One network load shared by every caller that asks for the same URL while
/// it runs (request coalescing, as Nuke does it: a map from key to the task
/// in flight, kept by `ImageLoader`).
///
/// Each caller `join`s (under the loader's lock, so a load that is being
/// abandoned is never joined) and then `wait`s. Each waiter resumes exactly
/// once: with the result, or with `cancelled` when its own task is cancelled
/// — which never cancels the others'. When the last waiter leaves before the
/// result, the load itself is cancelled, and that last waiter returns only
/// after the load has finished cleaning up (its temporary file removed).
final class SharedLoad: @unchecked Sendable {
    private let lock = Lock()
    // Guarded by `lock`:
    private var result: Phase?
    private var live: Set<UInt64> = [1]                             // joined, not yet answered
    private var continuations: [UInt64: CheckedContinuation<Phase, Never>] = [:]
    private var answerLater: Set<UInt64> = []                     // live at completion, not yet waiting
    private var abandonedBy: UInt64?
    private var nextID: UInt64 = 1
    private var task: Task<Void, Never>?

    /// The ticket of the caller that created the load (its first waiter).
    let firstWaiter: UInt64 = 1

    /// Starts `work` at once, with the creator as its first waiter. `onDone`
    /// runs before the waiters are answered (the loader removes the load from
    /// its map there).
    init(_ work: @escaping @Sendable () async -> Phase, onDone: @escaping @Sendable (SharedLoad) -> Void) {
        let task = Task {
            let phase = await work()
            onDone(self)
            self.complete(phase)
        }
        lock.withLock { self.task = task }
    }

    /// A place in the queue of waiters, or nil when the load has been abandoned
    /// by all its waiters (start a new one instead).
    func join() -> UInt64? {
        lock.withLock {
            guard abandonedBy == nil else { return nil }
            nextID += 1
            live.insert(nextID)
            return nextID
        }
    }

    /// The load's terminal phase, or `cancelled` if this task is cancelled first.
    func wait(_ id: UInt64) async -> Phase {
        let phase = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Phase, Never>) in
                let immediate = lock.withLock { () -> Phase? in
                    if let result { return answerLater.remove(id) != nil ? result : Self.cancelled }
                    guard live.contains(id) else { return Self.cancelled }   // cancelled before we got here
                    continuations[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            leave(id)
        }
        let loadToDrain = lock.withLock { abandonedBy == id ? task : nil }
        if let loadToDrain { await loadToDrain.value }
        return phase
    }

    private func leave(_ id: UInt64) {
        let (continuation, cancelLoad) = lock.withLock { () -> (CheckedContinuation<Phase, Never>?, Task<Void, Never>?) in
            guard result == nil, live.remove(id) != nil else { return (nil, nil) }
            let continuation = continuations.removeValue(forKey: id)
            guard live.isEmpty else { return (continuation, nil) }
            abandonedBy = id
            return (continuation, task)
        }
        continuation?.resume(returning: Self.cancelled)
        cancelLoad?.cancel()
    }

    private func complete(_ phase: Phase) {
        let waiting = lock.withLock { () -> [CheckedContinuation<Phase, Never>] in
            result = phase
            // Every waiter still here delivers (and releases) a no-store body once.
            if case .success(let loaded) = phase { loaded.transientBody?.share(among: live.count) }
            answerLater = live.subtracting(continuations.keys)
            live.removeAll()
            defer { continuations.removeAll() }
            return Array(continuations.values)
        }
        for continuation in waiting { continuation.resume(returning: phase) }
    }

    static let cancelled = Phase.failure(LoadError(kind: .cancelled, message: "cancelled"))
}
