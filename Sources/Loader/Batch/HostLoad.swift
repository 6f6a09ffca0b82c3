import DiskCache
import Fetch

/// A network load of a batch, as its host's queue holds it: everything the
/// batch needs to start it, report it, or fail it without trying.
struct HostLoad: Sendable {
    let host: HostKey
    let url: String
    let key: CacheKey
    /// The stored entry the plan found (revalidated, or served stale on error).
    var entry: CacheEntry? {
        if case .some(let entry, _) = storedEntry { entry } else { nil }
    }
    /// Its conditional request, made ready as the list was read
    /// (`ImageLoader.prepareRevalidation`), off the transfer loop that starts it.
    var request: PreparedRequest? {
        if case .some(_, let request) = storedEntry { request } else { nil }
    }
    /// Whether it has an `entry` (read without copying the entry out of its box).
    let hasEntry: Bool
    /// The URL as reported (password removed).
    let shown: String
    /// Seconds its cache lookup took (the first part of its duration).
    let lookup: Double
    /// Seconds it was first in its host's line before it started (set when it starts).
    var waited = 0.0
    /// Its host had connected and answered when it started (set when it
    /// starts): its attempts' connections and responses then change nothing
    /// for the scheduler (`HostScheduler.changesNothing`; a host's state
    /// outlives its running and queued URLs, and those two flags are never
    /// cleared), so its gate does not report them (`HostAttemptGate`).
    var hostKnown = false
    /// Its host had more URLs queued when it started (set when it starts):
    /// its first attempt then keeps its connection without asking the
    /// dispatch on the transfer loop's thread (`HostAttemptGate`). nil: not known.
    var hostQueued: Bool?
    /// A `stale-while-revalidate` refresh: the URL already has its report.
    let refresh: Bool
    /// `entry` and `request`, boxed: a `CacheEntry` is about 250 bytes
    /// inline, and most queued loads (cold URLs) have none; the read-ahead holds thousands.
    private let storedEntry: StoredEntry

    private enum StoredEntry {
        case none
        indirect case some(CacheEntry, PreparedRequest?)
    }

    init(host: HostKey, url: String, key: CacheKey, entry: CacheEntry?, request: PreparedRequest? = nil,
         shown: String, lookup: Double, refresh: Bool) {
        self.host = host
        self.url = url
        self.key = key
        storedEntry = entry.map { .some($0, request) } ?? .none
        hasEntry = entry != nil
        self.shown = shown
        self.lookup = lookup
        self.refresh = refresh
    }
}
