import Fetch

/// The command line's own limits, beside the library's in `Defaults`.
extension Defaults {
    /// After SIGINT/SIGTERM the run normally ends within milliseconds; if
    /// something hangs, it is ended anyway after this long.
    static let interruptGrace: Double = 3
    /// After SIGINT/SIGTERM, how long the run may wait before it looks at
    /// its output, and then how long a full standard output or error (a pipe
    /// nobody reads) may stay full before the run ends without its report:
    /// together well under the second SPEC §6 allows.
    static let blockedOutputLook: Double = 0.4
    static let blockedOutputWait: Double = 0.2
    /// glibc malloc's thresholds for the process (`MallocPolicy`): blocks of
    /// this size and more are mapped on their own, and a heap's free top is
    /// given back to the kernel only past the trim threshold (glibc pairs
    /// them so: twice the mmap threshold).
    static let mallocMmapThreshold = 1 << 20
    static let mallocTrimThreshold = 2 << 20
    /// At most this many `WordHints` in a run (`asyncfetch $(cat list)` of
    /// bare host names gets a few, not thousands).
    static let wordHintLimit = 3
}
