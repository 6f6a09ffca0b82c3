import Support

/// Cancels one fetch begun with `FetchClient.start`, whatever it is doing:
/// an attempt on the transfer loop, or the Swift task it went on on (a
/// retry, a gate's wait). A cancel that comes before the fetch registers
/// is kept: the fetch then fails `.cancelled` at once (`register`).
///
/// Lifetimes: the handle holds the running attempt's transfer (until the
/// next one registers) or the task. The transfer's completion closure holds
/// the handle until the transfer is answered (`finish` drops the closure),
/// which breaks that cycle.
///
/// A struct over its one `Locked` box: copies are the same handle (they
/// share the box, as references to a class would), and a fetch makes one
/// object for it, not two (a class around the box was an allocation and a
/// free more per URL).
public struct FetchHandle: Sendable {
    private struct State {
        var cancelled = false
        var transfer: CurlTransfer?
        var loops: TransferLoops?
        var task: Task<Void, Never>?
    }

    private let state: Locked<State>

    public init() { state = Locked(State()) }

    /// The same for every copy of this handle, and for no other handle while it exists.
    public var id: ObjectIdentifier { state.id }

    /// Stops the fetch; it completes `.cancelled` (unless it had completed).
    public func cancel() {
        let (transfer, loops, task) = state.withLock { state in
            state.cancelled = true
            return (state.transfer, state.loops, state.task)
        }
        if let transfer, let loops { loops.cancel(transfer) }
        task?.cancel()
    }

    /// The attempt about to be submitted; false when cancelled already.
    func register(_ transfer: CurlTransfer, on loops: TransferLoops) -> Bool {
        state.withLock { state in
            if state.cancelled { return false }
            state.transfer = transfer
            state.loops = loops
            return true
        }
    }

    /// Runs `work` on one of the client's completion workers: for a
    /// completion that runs on its transfer loop (a first attempt's 304,
    /// `FetchClient.start`) to hand the rest of its work off, there it joins
    /// the loop's round (one batch and at most one wake-up per round:
    /// `CurlLoop.handOff`). While the workers already have
    /// `Defaults.completionBacklogLimit` jobs pending, or when the fetch never
    /// reached a loop, `work` runs here, now. Exactly once either way.
    public func handOff(_ work: @escaping @Sendable () -> Void) {
        guard let loop = state.withLock({ $0.transfer?.loop }) else { return work() }
        loop.handOffBounded(work)
    }

    /// Gives `item` to `owner`'s `work`, which runs at the end of the round
    /// (one pass of the transfer loop) in which the fetch's completion runs,
    /// on the loop's thread, once, with every item the owner gave in that
    /// round of that loop, in order: after every transfer the round finished
    /// and before its `handOff`s go to a worker. For completions that run
    /// on the loop (a first attempt's 304, `FetchClient.start`) to do
    /// together, once per round, what each would do alone (`CurlLoop.atRoundEnd`).
    /// The first `work` an owner gives in a round is the one that runs. When
    /// the fetch never reached a loop, or off the loop's thread, `work` runs
    /// here, now, with `item` alone.
    public func atRoundEnd(for owner: AnyObject, with item: any AnyObject & Sendable,
                           _ work: @escaping @Sendable ([any AnyObject & Sendable]) -> Void) {
        guard let loop = state.withLock({ $0.transfer?.loop }) else { return work([item]) }
        loop.atRoundEnd(for: ObjectIdentifier(owner), with: item, work)
    }

    /// Runs the rest of the fetch on a Swift task that `cancel` cancels (the
    /// fetch's own retries, or its owner's next step: a load asked again).
    public func continueOnTask(_ body: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            state.transfer = nil
            state.loops = nil
            let task = Task(operation: body)
            if state.cancelled { task.cancel() }
            state.task = task
        }
    }
}
