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
    /// A body's copy to a destination nobody reads (a full pipe, a FIFO no
    /// reader has opened) looks this often, in milliseconds, whether its
    /// load was cancelled (`CancellableWrite`, `ImageLoader.copy`): Ctrl-C's
    /// report is due within a second (SPEC §6).
    static let deliveryCancelCheckMilliseconds: Int32 = 20
}
