import Fetch

/// How a load reads back bodies kept on disk (`CacheSink`, `ImageLoader.copy`).
extension Defaults {
    /// Bytes read at a time from a body part on disk: the part a resumed
    /// download kept, walked for its structure before the 206's bytes, and
    /// what the cache refused to store, moved to a spool file (`CacheSink`).
    static let keptPartReadBytes = 256 * 1024
    /// Bytes copied at a time from a stored body to `-o FILE` or standard
    /// output (`ImageLoader.copy`): memory stays flat however large it is.
    static let deliveryCopyBytes = 64 * 1024
}
