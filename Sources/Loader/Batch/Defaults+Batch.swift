import Fetch

/// How a batch takes up its URLs (`LoadBatch`).
extension Defaults {
    /// URLs a batch takes up at once (fewer when its backlog has less room).
    /// Each chunk ends with a serial hand-off (the second task's wake-up, the
    /// tasks' last blocks ending unevenly, its answers queued in order): 512
    /// has a quarter of 128's, for 1.6 % fewer instructions and a few per
    /// cent less wall on 10,000 hits (bench/README, session 17).
    static let batchChunkURLs = 512
}
