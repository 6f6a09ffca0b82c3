import Fetch
import Support

/// A batch's network loads without a Swift task each (issue 22 item 2):
/// each starts with `ImageLoader.startNetwork`, and its end — for a
/// transfer answered at the first attempt, on the fetch client's completion
/// worker that took it from its loop — reports the URL to the channel (not
/// urgent: the consumer is woken once per run of results), gives the slot
/// back, and starts right there the loads that slot let the scheduler
/// start. A 304 that updates its entry in place gives the slot back and
/// starts those loads on its transfer loop, at the end of the loop's round
/// with the round's other 304s (one scheduler step per round), and only
/// then is its record updated and the URL reported, on a completion worker
/// (`startNetwork`'s `giveSlotBack`). Only loads started by other events (new URLs, a
/// pause's end) go through the batch's main loop.
///
/// Memory: a load's slot comes back only when its end has run, so at most
/// `--jobs` finished transfers (each holding a body of at most
/// `Defaults.bufferedBodyLimit`) wait for a completion worker. A 304's slot
/// comes back before (it holds no body); Fetch's
/// `Defaults.completionBacklogLimit` bounds how many of those wait.
///
/// Cancellation: holds each running load's `FetchHandle`; `cancel()`
/// cancels them all, and a load started later is cancelled at once. Each
/// ends `failure`/`cancelled`, reported once, as a task's load would.
///
/// The end: a load pushed back by its host holds no slot while it waits,
/// so the scheduler may find nothing running before that load has reported
/// (it is then given up on or cancelled). `waitForAll` is what a task
/// group's end was: the batch ends only after every load's report.
final class BatchLoads: Sendable {
    let loader: ImageLoader
    private let channel: BatchChannel
    let dispatch: HostDispatch

    private struct Running {
        var cancelled = false
        /// The running loads' handles, each in a slot it keeps until its end
        /// (a free slot is nil and listed in `free`): no hashing per load, as
        /// a dictionary by `ObjectIdentifier` had (two `Hasher`s per URL).
        var handles: [FetchHandle?] = []
        var free: [Int] = []
        var count = 0
        /// `waitForAll`, until `count` is 0.
        var waiter: ParkedContinuation<Void>?

        mutating func add(_ handle: FetchHandle) -> Int {
            count += 1
            if let slot = free.popLast() {
                handles[slot] = handle
                return slot
            }
            handles.append(handle)
            return handles.count - 1
        }

        mutating func remove(_ slot: Int) {
            handles[slot] = nil
            free.append(slot)
            count -= 1
        }
    }

    private let running = Locked(Running())

    /// Loads run this way unless a body must be decoded (`--decode`: never on
    /// a loop thread) or bodies are delivered (`-o`, `--output-dir`: a copy of
    /// any size): those keep a task each. With a remote tier, the reads of its
    /// lane run this way too (`BatchLoads+Tier.swift`), and an origin's
    /// answer is queued for upload before the URL is reported (`ImageLoader.share`).
    static func applies(to options: LoaderOptions, delivery: Delivery?) -> Bool {
        !options.decode && delivery == nil
    }

    init(loader: ImageLoader, channel: BatchChannel, dispatch: HostDispatch) {
        self.loader = loader
        self.channel = channel
        self.dispatch = dispatch
    }

    /// Starts `loads` (reported started already), in order.
    func start(_ loads: [HostLoad]) {
        let now = monotonicSeconds()
        for load in loads { start(load, now: now) }
    }

    /// Cancels every running load, and each one started from now on.
    func cancel() {
        let handles = running.withLock { running in
            running.cancelled = true
            return running.handles.compactMap { $0 }
        }
        for handle in handles { handle.cancel() }
    }

    /// Returns once every load started has reported its end (call it once
    /// the scheduler has nothing left to start).
    func waitForAll() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = running.withLock { running -> Bool in
                if running.count == 0 { return true }
                running.waiter = ParkedContinuation(continuation)
                return false
            }
            if ended { continuation.resume() }
        }
    }

    /// What a load's end reports and gives back, held by its gate (`HostAttemptGate.batchEnd`).
    struct End: Sendable {
        let batch: BatchLoads
        /// The URL as reported, and whether its load is a refresh (`HostLoad.shown`, `.refresh`).
        let shown: String
        let refresh: Bool
        /// When the URL's time began: its lookup, its own wait for a slot (first in its host's line), its transfer.
        let since: Double
        /// Its handle's slot in `running`.
        let slot: Int
    }

    /// Gives `gate`'s load's slot back and starts, here, the loads it lets the scheduler start.
    private func giveBack(_ gate: HostAttemptGate) {
        start(dispatch.finished(gate: gate, handOut: true))
    }

    /// `giveBack` of a load whose 304 completes on its transfer loop (`startNetwork`'s
    /// `giveSlotBack`), at the end of the loop's round, with the round's others: one
    /// scheduler step per round, not per 304 (`FetchHandle.atRoundEnd`). The round ends
    /// before its completions go to a worker, so each load's slot is back, and the loads
    /// that lets the scheduler start are started, before the load reports and ends.
    private func giveBackAtRoundEnd(_ gate: HostAttemptGate, handle: FetchHandle) {
        handle.atRoundEnd(for: self, with: gate) { [self] gates in
            start(dispatch.finished(gates: gates.compactMap { $0 as? HostAttemptGate }, handOut: true))
        }
    }

    private func start(_ load: HostLoad, now: Double) {
        let remote = loader.options.remote
        if remote != nil && load.host == ImageLoader.tierLane { return startTierRead(load, now: now) }
        let handle = FetchHandle()
        let gate = register(load, now: now, handle: handle)
        // A revalidation's 304 that updates its entry in place gives the slot back on its transfer
        // loop, before its file work (`startNetwork`); a load without an entry cannot get one.
        let giveSlotBack: (@Sendable () -> Void)? = !load.hasEntry ? nil : { @Sendable [self] in
            giveBackAtRoundEnd(gate, handle: handle)
        }
        // `startNetwork` never completes before it returns, so the loads started below never nest.
        // The completion captures the gate alone (no context to allocate and free per URL); the
        // gate holds what the end needs (`End`).
        // A load without an entry (a cold URL) passes a plain nil: the entry copied out of the load,
        // even nil, is a copy and a destroy through `CacheEntry?`'s value witnesses.
        let stored = load.hasEntry ? load.entryAndRequest : (entry: nil, request: nil)
        guard let remote else {
            return loader.startNetwork(url: load.url, key: load.key, entry: stored.entry, prepared: stored.request, gate: gate,
                                       handedOut: load.refresh, handle: handle, giveSlotBack: giveSlotBack) { [gate] loaded, slotGivenBack in
                BatchLoads.ended(gate, loaded, slotGivenBack: slotGivenBack)
            }
        }
        // With a tier: the origin's answer is queued for upload before the URL is reported.
        let url = load.url, key = load.key
        loader.startNetwork(url: url, key: key, entry: stored.entry, prepared: stored.request, gate: gate,
                            handedOut: load.refresh, handle: handle, giveSlotBack: giveSlotBack) { [self, gate] loaded, slotGivenBack in
            loader.share(loaded, url: url, key: key, with: remote, uploadSlots: dispatch)
            BatchLoads.ended(gate, loaded, slotGivenBack: slotGivenBack)
        }
    }

    /// Adds a load about to start to `running` (cancelled at once after `cancel()`), and makes its
    /// gate, which holds its end (`End`).
    func register(_ load: HostLoad, now: Double, handle: FetchHandle) -> HostAttemptGate {
        let (slot, cancelled) = running.withLock { running in (running.add(handle), running.cancelled) }
        if cancelled { handle.cancel() }
        let end = End(batch: self, shown: load.shown, refresh: load.refresh, since: now - load.lookup - load.waited,
                      slot: slot)
        return HostAttemptGate(host: load.host, dispatch: dispatch, retries: loader.options.fetch.retries,
                               hostKnown: load.hostKnown, queuedAtStart: load.hostQueued, batchEnd: end)
    }

    /// A load's end (`start`'s completion): its report, its slot, its place in `running`.
    static func ended(_ gate: HostAttemptGate, _ loaded: Phase, slotGivenBack: Bool) {
        guard let end = gate.batchEnd else { return }   // set for every gate `start` makes
        let batch = end.batch
        // Reported before the slot is given back, unless it was already: either way, before the
        // load leaves `running`, so the batch ends only once every URL's event is queued (`waitForAll`).
        batch.channel.send(LoadEvent(url: end.shown, phase: batch.loader.deliver(loaded, url: end.shown, to: nil),
                                     duration: monotonicSeconds() - end.since, refreshed: end.refresh), urgent: false)
        if !slotGivenBack { batch.giveBack(gate) }
        batch.leave(end)
    }

    /// A load's end without a report (the tier's lane handed its URL to its origin, queued
    /// already): its slot, and the loads that lets start, then its place in `running`.
    static func handedOver(_ gate: HostAttemptGate) {
        guard let end = gate.batchEnd else { return }
        end.batch.giveBack(gate)
        end.batch.leave(end)
    }

    /// A load leaves `running`, waking `waitForAll` when it was the last.
    private func leave(_ end: End) {
        // Last: the loads just started are counted first, so `count` is 0 only at the end.
        let waiter = running.withLock { running -> ParkedContinuation<Void>? in
            running.remove(end.slot)
            guard running.count == 0 else { return nil }
            defer { running.waiter = nil }
            return running.waiter
        }
        waiter?.resume()
    }
}
