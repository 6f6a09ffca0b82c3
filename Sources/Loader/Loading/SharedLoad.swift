import Support

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
///
/// The rules live in `SharedLoadState`, a value whose methods return what to
/// do; this class holds it in a lock and does that outside it.
final class SharedLoad: Sendable {
    private struct Guarded {
        var machine = SharedLoadState<CheckedContinuation<Phase, Never>>()
        var task: Task<Void, Never>?
    }

    private let state = Locked(Guarded())

    /// The ticket of the caller that created the load (its first waiter).
    let firstWaiter = SharedLoadState<CheckedContinuation<Phase, Never>>.firstWaiter

    /// Starts `work` at once, with the creator as its first waiter. `onDone`
    /// runs before the waiters are answered (the loader removes the load from
    /// its map there).
    init(_ work: @escaping @Sendable () async -> Phase, onDone: @escaping @Sendable (SharedLoad) -> Void) {
        let task = Task {
            let phase = await work()
            onDone(self)
            self.complete(phase)
        }
        state.withLock { $0.task = task }
    }

    /// A place in the queue of waiters, or nil when the load has been abandoned
    /// by all its waiters (start a new one instead).
    func join() -> UInt64? {
        state.withLock { $0.machine.join() }
    }

    /// Callers suspended in `wait` while the load runs (a read for tests).
    var waiting: Int { state.withLock { $0.machine.waiting } }

    /// The load's terminal phase, or `cancelled` if this task is cancelled first.
    func wait(_ id: UInt64) async -> Phase {
        let phase = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Phase, Never>) in
                run(state.withLock { $0.machine.wait(id, continuation) }, load: nil)
            }
        } onCancel: {
            let (action, load) = state.withLock { ($0.machine.leave(id), $0.task) }
            run(action, load: load)
        }
        let loadToDrain = state.withLock { $0.machine.mustDrain(id) ? $0.task : nil }
        if let loadToDrain { await loadToDrain.value }
        return phase
    }

    private func complete(_ phase: Phase) {
        let action = state.withLock { state in
            let (action, sharers) = state.machine.complete(phase)
            // Every waiter still here delivers (and releases) a no-store body
            // once; shared before any of them can have the result.
            if case .success(let loaded) = phase { loaded.transientBody?.share(among: sharers) }
            return action
        }
        run(action, load: nil)
    }

    /// Does what the state machine decided, outside the lock (`load`: the
    /// task, for an action that may cancel it).
    private func run(_ action: SharedLoadState<CheckedContinuation<Phase, Never>>.Action, load: Task<Void, Never>?) {
        switch action {
        case .nothing:
            break
        case .resume(let waiter, let phase):
            waiter.resume(returning: phase)
        case .resumeAll(let waiters, let phase):
            for waiter in waiters { waiter.resume(returning: phase) }
        case .cancelLoad(let leaving):
            leaving?.resume(returning: SharedLoadState<CheckedContinuation<Phase, Never>>.cancelled)
            load?.cancel()
        }
    }
}
