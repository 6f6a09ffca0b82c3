/// The rules of a `SharedLoad`, as a value: which waiters are answered with
/// what, and when the load itself is cancelled. Each method changes the state
/// and returns the `Action` its owner performs once the lock is released
/// (the shape of async-http-client's `Transaction.StateMachine`). Generic in
/// the waiter (a continuation in use, any value in tests).
///
/// Waiters hold tickets from `join`; the creator holds `firstWaiter`. Every
/// ticket is answered exactly once: by `wait` at once, by `complete`, or by
/// `leave` (cancelled). A ticket that leaves before it waits is answered
/// `cancelled` by its `wait`.
struct SharedLoadState<Waiter> {
    static var firstWaiter: UInt64 { 1 }
    static var cancelled: Phase { .failure(LoadError(kind: .cancelled, message: "cancelled")) }

    enum Action {
        case nothing
        case resume(Waiter, Phase)
        case resumeAll([Waiter], Phase)
        /// The last waiter left: cancel the load, and answer the leaving
        /// waiter (if it was waiting) `cancelled`.
        case cancelLoad(resuming: Waiter?)
    }

    fileprivate enum Stage {
        /// The load runs. `live`: joined and not yet answered; `waiting`: those of them suspended in `wait`.
        case running(live: Set<UInt64>, waiting: [UInt64: Waiter])
        /// Every waiter left before the result: the load is being cancelled.
        /// `by` is the last to leave, who waits for its cleanup.
        case abandoned(by: UInt64)
        /// The load ended. `answerLater`: joined when it ended but not yet
        /// waiting; `abandonedBy` as above, when it had been abandoned.
        case finished(Phase, answerLater: Set<UInt64>, abandonedBy: UInt64?)
    }

    private var stage = Stage.running(live: [Self.firstWaiter], waiting: [:])
    private var lastTicket = Self.firstWaiter

    /// Waiters suspended in `wait` while the load runs (a read for tests).
    var waiting: Int {
        guard case .running(_, let waiting) = stage else { return 0 }
        return waiting.count
    }

    /// A new ticket, or nil when the load was abandoned or has ended (start a new one instead).
    mutating func join() -> UInt64? {
        guard case .running(var live, let waiting) = stage else { return nil }
        lastTicket += 1
        live.insert(lastTicket)
        stage = .running(live: live, waiting: waiting)
        return lastTicket
    }

    /// `id` starts waiting: answered at once (`resume`) when the load has
    /// ended or `id` already left, otherwise kept until `complete` or `leave`.
    mutating func wait(_ id: UInt64, _ waiter: Waiter) -> Action {
        switch stage {
        case .running(let live, var waiting):
            guard live.contains(id) else { return .resume(waiter, Self.cancelled) }   // left before it got here
            waiting[id] = waiter
            stage = .running(live: live, waiting: waiting)
            return .nothing
        case .abandoned:
            return .resume(waiter, Self.cancelled)
        case .finished(let result, var answerLater, let abandonedBy):
            guard answerLater.remove(id) != nil else { return .resume(waiter, Self.cancelled) }
            stage = .finished(result, answerLater: answerLater, abandonedBy: abandonedBy)
            return .resume(waiter, result)
        }
    }

    /// `id`'s task was cancelled before the result: it is answered
    /// `cancelled` (now if it waits, else by its `wait`); the last one to
    /// leave cancels the load. Nothing once the load has ended.
    mutating func leave(_ id: UInt64) -> Action {
        guard case .running(var live, var waiting) = stage, live.remove(id) != nil else { return .nothing }
        let leaving = waiting.removeValue(forKey: id)
        if live.isEmpty {
            stage = .abandoned(by: id)
            return .cancelLoad(resuming: leaving)
        }
        stage = .running(live: live, waiting: waiting)
        return leaving.map { .resume($0, Self.cancelled) } ?? .nothing
    }

    /// The load ended with `result`: every waiter is answered with it, and
    /// tickets not yet waiting get it from `wait`. Also returns how many
    /// tickets get the result (the holders of a transient body).
    mutating func complete(_ result: Phase) -> (Action, sharers: Int) {
        switch stage {
        case .running(let live, let waiting):
            stage = .finished(result, answerLater: live.subtracting(waiting.keys), abandonedBy: nil)
            return (waiting.isEmpty ? .nothing : .resumeAll(Array(waiting.values), result), live.count)
        case .abandoned(let by):
            stage = .finished(result, answerLater: [], abandonedBy: by)
            return (.nothing, 0)
        case .finished:
            return (.nothing, 0)   // a load completes once; nothing is left to answer
        }
    }

    /// Whether `id`, having been answered, must wait for the load to finish
    /// cleaning up: it was the last to leave, and so cancelled the load.
    func mustDrain(_ id: UInt64) -> Bool {
        switch stage {
        case .running: return false
        case .abandoned(let by): return by == id
        case .finished(_, _, let abandonedBy): return abandonedBy == id
        }
    }
}

extension SharedLoadState: Sendable where Waiter: Sendable {}
extension SharedLoadState.Stage: Sendable where Waiter: Sendable {}
