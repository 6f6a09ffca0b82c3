import DiskCache
import Fetch

/// A network load of a batch, as its host's queue holds it: everything the
/// batch needs to start it, report it, or fail it without trying.
///
/// What never changes (the URL, its key and host, the stored entry) is one
/// shared object (`Fixed`): the scheduler's steps copy a load ~5 times
/// between the read-ahead and its start, and a copy is then one retain, not
/// one per string (~6: the URL, the key's two, the shown URL, the host's).
struct HostLoad: Sendable {
    var host: HostKey { fixed.host }
    var url: String { fixed.url }
    var key: CacheKey { fixed.key }
    /// The stored entry the plan found (revalidated, or served stale on error).
    var entry: CacheEntry? {
        if case .some(let entry, _) = fixed.storedEntry { entry } else { nil }
    }
    /// `entry` and its conditional request, made ready as the list was read
    /// (`ImageLoader.prepareRevalidation`), off the transfer loop that starts it: the
    /// entry copied out of its box once (`entry` and a request alone copied it twice, on the loop).
    var entryAndRequest: (entry: CacheEntry?, request: PreparedRequest?) {
        if case .some(let entry, let request) = fixed.storedEntry { (entry, request) } else { (nil, nil) }
    }
    /// Whether it has an `entry` (read without copying the entry out of its box).
    var hasEntry: Bool { fixed.hasEntry }
    /// The URL as reported (password removed).
    var shown: String { fixed.shown }
    /// Seconds its cache lookup took (the first part of its duration).
    var lookup: Double { fixed.lookup }
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
    var refresh: Bool { fixed.refresh }
    /// The remote tier was asked already (`host` is the URL's origin now):
    /// what is left is the origin's transfer (`afterTier`).
    var tierAsked: Bool { fixed.tierAsked }
    private let fixed: Fixed

    private final class Fixed: Sendable {
        let host: HostKey
        let url: String
        let key: CacheKey
        let shown: String
        let lookup: Double
        let refresh: Bool
        let tierAsked: Bool
        let hasEntry: Bool
        /// `entry` and `request`, boxed: a `CacheEntry` is about 250 bytes
        /// inline, and most queued loads (cold URLs) have none; the read-ahead holds thousands.
        let storedEntry: StoredEntry

        init(host: HostKey, url: String, key: CacheKey, shown: String, lookup: Double, refresh: Bool,
             tierAsked: Bool = false, storedEntry: StoredEntry) {
            self.host = host
            self.url = url
            self.key = key
            self.shown = shown
            self.lookup = lookup
            self.refresh = refresh
            self.tierAsked = tierAsked
            self.storedEntry = storedEntry
            if case .some = storedEntry { hasEntry = true } else { hasEntry = false }
        }
    }

    private enum StoredEntry {
        case none
        indirect case some(CacheEntry, PreparedRequest?)
    }

    init(host: HostKey, url: String, key: CacheKey, entry: CacheEntry?, request: PreparedRequest? = nil,
         shown: String, lookup: Double, refresh: Bool) {
        fixed = Fixed(host: host, url: url, key: key, shown: shown, lookup: lookup, refresh: refresh,
                      storedEntry: entry.map { .some($0, request) } ?? .none)
    }

    /// This load after the remote tier's lane (`ImageLoader.tierLane`) did not answer it: the same
    /// URL, queued for its origin `host` with what the tier gave (`entry`: a stale object, to be
    /// revalidated), `elapsed` seconds of its time spent already (lookup, wait, tier read).
    func afterTier(host: HostKey, entry: CacheEntry?, elapsed: Double) -> HostLoad {
        HostLoad(fixed: Fixed(host: host, url: url, key: key, shown: shown, lookup: elapsed, refresh: refresh,
                              tierAsked: true, storedEntry: entry.map { .some($0, nil) } ?? .none))
    }

    private init(fixed: Fixed) { self.fixed = fixed }
}
