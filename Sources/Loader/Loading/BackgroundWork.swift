import Support

/// Tasks a loader runs after it has answered (`stale-while-revalidate`
/// refreshes), so that a program can wait for them before it exits.
final class BackgroundWork: Sendable {
    private struct State {
        var running: [UInt64: Task<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    /// Starts `work` as an unstructured task: the caller's cancellation does not reach it.
    func start(_ work: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            state.running[id] = Task {
                await work()
                self.state.withLock { _ = $0.running.removeValue(forKey: id) }
            }
        }
    }

    /// Returns when every task started so far, and any they started, has ended.
    func finished() async {
        while let task = state.withLock({ $0.running.values.first }) {
            await task.value
        }
    }
}
