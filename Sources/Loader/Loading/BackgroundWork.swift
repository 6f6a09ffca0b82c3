import Fetch

/// Tasks a loader runs after it has answered (`stale-while-revalidate`
/// refreshes), so that a program can wait for them before it exits.
final class BackgroundWork: Sendable {
    private let lock = Lock()
    private nonisolated(unsafe) var running: [UInt64: Task<Void, Never>] = [:]   // guarded by lock
    private nonisolated(unsafe) var nextID: UInt64 = 0                          // guarded by lock

    /// Starts `work` as an unstructured task: the caller's cancellation does not reach it.
    func start(_ work: @escaping @Sendable () async -> Void) {
        lock.withLock {
            nextID += 1
            let id = nextID
            running[id] = Task {
                await work()
                self.lock.withLock { _ = self.running.removeValue(forKey: id) }
            }
        }
    }

    /// Returns when every task started so far, and any they started, has ended.
    func finished() async {
        while let task = lock.withLock({ running.values.first }) {
            await task.value
        }
    }
}
