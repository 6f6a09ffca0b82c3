#if canImport(Glibc)
import Glibc
#endif
import func Support.writeAll
import Synchronization

/// Direct writes to stdout/stderr through file descriptors (the C `stdout`
/// and `stderr` globals are shared mutable state to Swift 6). It owns the
/// unbuffered writes of a message or a bar; buffered result lines go
/// through `LineOutput`. Public: the tool's messages and a Swift program's
/// go out the same way.
public enum Console {
    /// Writes a line to stderr at once (unbuffered, like C's stderr), after
    /// the lines `print` has buffered for stdout (`fflush(nil)`: nothing to
    /// write when none are, as in a run, whose lines go through
    /// `LineOutput`). Without it, with both streams on one pipe (`2>&1 |`),
    /// a cache command's message came before the stdout lines printed ahead
    /// of it: `cache path`'s "not cached" before the paths of the URLs
    /// before it, `cache pull`'s summary before every `pulled` line.
    public static func error(_ line: String) {
        flushBuffered()
        send(2, Array((line + "\n").utf8))
    }

    /// Flushes what `print` buffered, and says whether all of it was ever
    /// written: nil, or the `errno` of the first flush that failed, here or
    /// in an `error` before (glibc empties a buffer it could not write, so
    /// the exit's own flush alone would find nothing left and succeed).
    public static func flushOutput() -> Int32? {
        flushBuffered()
        let code = flushFailure.load(ordering: .relaxed)
        return code == 0 ? nil : code
    }

    /// The first failed flush's `errno` (0: none).
    private static let flushFailure = Atomic<Int32>(0)

    private static func flushBuffered() {
        guard fflush(nil) != 0 else { return }
        _ = flushFailure.compareExchange(expected: 0, desired: errno == 0 ? EIO : errno, ordering: .relaxed)
    }

    /// Writes everything; false when the descriptor refuses (a closed
    /// pipe: `EPIPE`, since SIGPIPE is ignored; a full disk), with `errno`
    /// telling why.
    @discardableResult
    public static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll(fd, $0) == nil }
    }
}
