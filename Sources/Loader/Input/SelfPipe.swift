#if canImport(Glibc)
import Glibc
#endif

/// A pipe whose ends are closed on exec (`pipe2` needs _GNU_SOURCE, which
/// Swift's Glibc module does not define). Used to wake a thread blocked in
/// `poll` or `read`.
public struct SelfPipe: Sendable {
    public let readFD: Int32
    public let writeFD: Int32

    /// Nil, with `errno` set, when the system refuses.
    public init?() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds where fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 {
            let saved = errno
            close(fds[0])
            close(fds[1])
            errno = saved
            return nil
        }
        readFD = fds[0]
        writeFD = fds[1]
    }
}
