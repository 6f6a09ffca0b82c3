import CLoader
#if canImport(Glibc)
import Glibc
#endif

/// A pipe whose ends are closed on exec, set atomically by `pipe2`
/// (`O_CLOEXEC`): a `pipe` then `fcntl` left a moment in which a
/// `posix_spawn` on another thread inherited both ends. Used to wake a
/// thread blocked in `poll` or `read`.
public struct SelfPipe: Sendable {
    public let readFD: Int32
    public let writeFD: Int32

    /// Nil, with `errno` set, when the system refuses.
    public init?() {
        var fds: [Int32] = [-1, -1]
        guard cloader_pipe_cloexec(&fds) == 0 else { return nil }
        readFD = fds[0]
        writeFD = fds[1]
    }
}
