import DiskCache

/// A network load of a batch, as its host's queue holds it: everything the
/// batch needs to start it, report it, or fail it without trying.
struct HostLoad: Sendable {
    let host: HostKey
    let url: String
    let key: CacheKey
    /// The stored entry the plan found (revalidated, or served stale on error).
    let entry: CacheEntry?
    /// The URL as reported (password removed).
    let shown: String
    /// Seconds its cache lookup took (the first part of its duration).
    let lookup: Double
    /// Seconds it was first in its host's line before it started (set when it starts).
    var waited = 0.0
    /// A `stale-while-revalidate` refresh: the URL already has its report.
    let refresh: Bool
}
