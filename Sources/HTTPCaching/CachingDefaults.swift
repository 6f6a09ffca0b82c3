/// The cache policy's defaults, in one place. (Fetch's `Defaults` holds the
/// transfer limits, `CacheDefaults` the disk cache's, `RemoteDefaults` the
/// remote tier's.)
public enum CachingDefaults {
    /// Freshness given to a response with no explicit freshness (`--default-ttl`): 7 days.
    public static let defaultTTL: Double = 7 * 24 * 3600
    /// The fraction of `Date − Last-Modified` a heuristic lifetime is (RFC 9111 §4.2.2's "10%").
    public static let heuristicFraction = 0.1
}
