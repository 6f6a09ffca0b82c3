#if canImport(Glibc)
import Glibc
#endif

/// Writes all of `buffer` to `fd`, retrying short writes and `EINTR`: the
/// one POSIX write loop the modules share (a cache entry, a body file, the
/// terminal). Nil when everything was written; else the `errno` of the
/// write that failed (`EPIPE` from a closed pipe when SIGPIPE is ignored,
/// `ENOSPC`, …; `EIO` if the descriptor accepted nothing), left in `errno`
/// too.
public func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32? {
    guard var base = buffer.baseAddress else { return nil }
    var left = buffer.count
    while left > 0 {
        let n = write(fd, base, left)
        if n < 0 && errno == EINTR { continue }
        if n == 0 { errno = EIO }
        if n <= 0 { return errno }
        left -= n
        base += n
    }
    return nil
}
