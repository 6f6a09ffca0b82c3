#if canImport(Glibc)
import Glibc
#endif

/// Writes all of `buffer` to `fd`, retrying short writes and `EINTR`: the
/// one POSIX write loop the modules share (a cache entry, a body file, the
/// terminal). Nil when everything was written; else the `errno` of the
/// write that failed (`EPIPE` from a closed pipe when SIGPIPE is ignored,
/// `ENOSPC`, …; `EIO` if the descriptor accepted nothing), left in `errno`
/// too.
///
/// A descriptor someone else made non-blocking (`O_NONBLOCK` lives on the
/// open file, which a parent such as Node.js or a Python program shares
/// with the child it gives its pipe) refuses with `EAGAIN` when it is full:
/// the loop then waits until it can take more (`poll`), as a blocking write
/// would, and nothing is lost.
public func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32? {
    guard var base = buffer.baseAddress else { return nil }
    var left = buffer.count
    while left > 0 {
        let n = write(fd, base, left)
        if n < 0 && errno == EINTR { continue }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
            if let error = waitUntilWritable(fd) { return error }
            continue
        }
        if n == 0 { errno = EIO }
        if n <= 0 { return errno }
        left -= n
        base += n
    }
    return nil
}

/// Waits for `fd` to take a write (`POLLOUT`), or to fail one (an error or
/// hang-up: the next write says which). Nil when it may be written; else
/// `poll`'s `errno`.
private func waitUntilWritable(_ fd: Int32) -> Int32? {
    var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
    while poll(&descriptor, 1, -1) < 0 {
        if errno != EINTR { return errno }
    }
    return nil
}
