import DiskCache
import Fetch
import RemoteCache

/// One run of a URL list through the cache, with the lifecycle the
/// `asyncfetch` tool gives it, so that a Swift program gets the same:
///
/// 1. `init`: a run that may use the network first sweeps the cache's
///    leftover temporary files (of killed runs), then the batch starts.
/// 2. The caller reads `events` (one `LoadEvent` per phase change), and may
///    `cancel()` (Ctrl-C: every URL is still reported) or `stop()` (nobody
///    reads the results any more).
/// 3. `finish(interrupted:sync:)`: the uploads to the remote tier are
///    drained (they run beside the batch, never in a `jobs` slot; an
///    interrupted run abandons them), then, with `sync`, one `syncfs` of the
///    cache's file system for the whole run (SPEC §4: no fsync per entry);
///    it reports what the tier did and the first list that could not be read.
public final class BatchRun: Sendable {
    public let store: DiskCacheStore
    public let list: URLList
    public let events: LoadBatch
    private let options: LoaderOptions

    /// Starts the batch over `list` with a loader on `store` configured by
    /// `options` (its `remote` tier included); each successful body also goes
    /// to `delivery` (a file, standard output, or an `OutputDirectory`).
    /// `hostNotes` hears when a host is paused, its limit changes or it is given up on,
    /// from the reader of `events`, in order with them (`ImageLoader.batch`).
    /// `demand`: the events the caller reads, and how soon (`Reporter.demand` for the tool's output).
    /// `cancelled`: interrupted before it began (a signal during start-up): nothing starts and every
    /// URL is reported `empty` (`ImageLoader.batch`).
    public init(store: DiskCacheStore, list: URLList, options: LoaderOptions, deliverTo delivery: Delivery? = nil,
                hostNotes: (@Sendable (HostNote) -> Void)? = nil, demand: EventDemand = .everything, cancelled: Bool = false) {
        if !options.offline { store.sweepTemporaryFiles() }
        self.store = store
        self.list = list
        self.options = options
        events = ImageLoader(cache: store, options: options).batch(list, deliverTo: delivery, hostNotes: hostNotes,
                                                                          demand: demand, cancelled: cancelled)
    }

    /// Distinct URLs taken up so far, and how many there are in all once the
    /// whole list is known (duplicates left out): for a progress display.
    public var progress: (known: Int, total: Int?) {
        let counts = events.counts
        return (counts.distinct, list.progress.total.map { $0 - counts.duplicates })
    }

    /// No new transfers; those in flight are aborted; every URL is still reported.
    public func cancel() { events.cancel() }

    /// Stops producing events (their reader is gone); `finish` then waits for the work to end.
    public func stop() { events.stop() }

    /// What the end of the run found.
    public struct Ending: Sendable {
        /// What the remote tier did, when there is one.
        public var remoteStats: RemoteCache.Stats?
        /// Why the final `syncfs` failed, if it did.
        public var syncError: DiskCacheError?
        /// The lists that stopped early on a read error, in the order given: each one's path as
        /// given (`-`: stdin) and the reason.
        public var inputErrors: [(path: String, problem: String)] = []
        /// The first of `inputErrors`.
        public var inputError: (path: String, problem: String)? { inputErrors.first }
        /// Hosts scheduled, paused at least once, and given up on.
        public var hosts = HostCounts()
    }

    /// Ends the run once `events` has ended (or after `stop()`): see the type's steps.
    public func finish(interrupted: Bool, sync: Bool) async -> Ending {
        var ending = Ending()
        if let remote = options.remote {
            if !interrupted { await remote.drain() }
            ending.remoteStats = remote.stats
        }
        if sync && !options.offline {
            do { try store.sync() } catch { ending.syncError = error }
        }
        await events.finished()
        ending.hosts = events.hostCounts
        for input in list.inputs {
            if let problem = input.readError { ending.inputErrors.append((input.path, problem)) }
        }
        return ending
    }
}
