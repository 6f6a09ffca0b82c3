import Fetch
import Support

/// A batch's network loads without a Swift task each (issue 22 item 2):
/// each starts with `ImageLoader.startNetwork`, and its end — for a
/// transfer answered at the first attempt, on the fetch client's completion
/// worker that took it from its loop — reports the URL to the channel (not
/// urgent: the consumer is woken once per run of results), gives the slot
/// back, and starts right there the loads that slot let the scheduler
/// start. A 304 that updates its entry in place gives the slot back and
/// starts those loads on its transfer loop, and only then is its record
/// updated and the URL reported, on a completion worker (`startNetwork`'s
/// `giveSlotBack`). Only loads started by other events (new URLs, a
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
    private let loader: ImageLoader
    private let channel: BatchChannel
    private let dispatch: HostDispatch

    private struct Running {
        var cancelled = false
        /// The running loads' handles, each in a slot it keeps until its end
        /// (a free slot is nil and listed in `free`): no hashing per load, as
        /// a dictionary by `ObjectIdentifier` had (two `Hasher`s per URL).
        var handles: [FetchHandle?] = []
        var free: [Int] = []
        var count = 0
        /// `waitForAll`, until `count` is 0.
        var waiter: CheckedContinuation<Void, Never>?

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
    /// a loop thread), a remote tier is asked first, or bodies are delivered
    /// (`-o`, `--output-dir`: a copy of any size): those keep a task each.
    static func applies(to options: LoaderOptions, delivery: Delivery?) -> Bool {
        !options.decode && options.remote == nil && delivery == nil
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
                running.waiter = continuation
                return false
            }
            if ended { continuation.resume() }
        }
    }

    /// Gives `load`'s slot back and starts, here, the loads it lets the scheduler start.
    private func giveBack(_ load: HostLoad, _ gate: HostAttemptGate) {
        start(dispatch.finished(load, gate: gate, handOut: true))
    }

    private func start(_ load: HostLoad, now: Double) {
        let gate = HostAttemptGate(host: load.host, dispatch: dispatch, retries: loader.options.fetch.retries,
                                   hostKnown: load.hostKnown, queuedAtStart: load.hostQueued)
        // The URL's time: its lookup, its own wait for a slot (first in its host's line), its transfer.
        let since = now - load.lookup - load.waited
        let handle = FetchHandle()
        let (slot, cancelled) = running.withLock { running in (running.add(handle), running.cancelled) }
        if cancelled { handle.cancel() }
        // A revalidation's 304 that updates its entry in place gives the slot back on its transfer
        // loop, before its file work (`startNetwork`); a load without an entry cannot get one.
        let giveSlotBack: (@Sendable () -> Void)? = !load.hasEntry ? nil : { @Sendable [self] in giveBack(load, gate) }
        // `startNetwork` never completes before it returns, so the loads started below never nest.
        loader.startNetwork(url: load.url, key: load.key, entry: load.entry, prepared: load.request, gate: gate,
                            handle: handle, giveSlotBack: giveSlotBack) { [self] loaded, slotGivenBack in
            // Reported before the slot is given back, unless it was already: either way, before the
            // load leaves `running`, so the batch ends only once every URL's event is queued (`waitForAll`).
            channel.send(LoadEvent(url: load.shown, phase: loader.deliver(loaded, url: load.shown, to: nil),
                                   duration: monotonicSeconds() - since, refreshed: load.refresh), urgent: false)
            if !slotGivenBack { giveBack(load, gate) }
            // Last: the loads just started are counted first, so `count` is 0 only at the end.
            let waiter = running.withLock { running -> CheckedContinuation<Void, Never>? in
                running.remove(slot)
                guard running.count == 0 else { return nil }
                defer { running.waiter = nil }
                return running.waiter
            }
            waiter?.resume()
        }
    }
}
