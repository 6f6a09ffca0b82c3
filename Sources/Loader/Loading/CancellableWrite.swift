import CLoader
#if canImport(Glibc)
import Glibc
#endif
import enum Fetch.Defaults
import func Support.writeAll

/// Writes a body to a destination whose reader may never read it (standard
/// output or a FIFO into a pipe nobody drains, a socket, a terminal stopped
/// with Ctrl-S) so that a cancellation ends the wait (SPEC §6: Ctrl-C reports
/// the URL `cancelled` and prints the summary). A blocking `write` there
/// waited for good and ignored the cancelled task.
///
/// No write ever waits in the kernel: `pwritev2` with `RWF_NOWAIT` writes
/// what fits and refuses with `EAGAIN` when nothing does, without setting
/// `O_NONBLOCK` on standard output (that flag lives on the open file, which
/// the shell and the reader's side of a terminal share). Between writes the
/// writer waits for room (`poll`, `POLLOUT`) in steps of
/// `Defaults.deliveryCancelCheckMilliseconds`, asking `cancelled` after each.
/// Cancellation is asked only when the destination has no room: a reader
/// that keeps up gets the whole body, however late the cancel comes.
///
/// A regular file never waits for a reader: it gets plain writes. Where
/// `RWF_NOWAIT` is refused (`EOPNOTSUPP`: a terminal; a kernel before 5.8
/// for a pipe), each write waits for `POLLOUT` first and is at most
/// `PIPE_BUF` bytes, which a pipe with room takes without waiting.
struct CancellableWrite {
    enum Outcome: Equatable {
        case written
        /// The `errno` of the write that failed.
        case failed(Int32)
        /// `cancelled` said so while the destination had no room.
        case cancelled
    }

    let fd: Int32
    /// Not a regular file: a reader may hold it up.
    private let mayWaitForReader: Bool
    /// `RWF_NOWAIT` is taken (until the descriptor refuses it once).
    private var noWait = true

    /// Linux's `PIPE_BUF`: a pipe that polls writable takes this many bytes without waiting.
    private static let atomicSize = 4096

    init(fd: Int32) {
        self.fd = fd
        var info = stat()
        mayWaitForReader = !(fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
    }

    /// Writes all of `buffer`, or stops when `cancelled` (asked only while the
    /// destination has no room), or at the first write that fails.
    mutating func send(_ buffer: UnsafeRawBufferPointer, cancelled: () -> Bool) -> Outcome {
        guard mayWaitForReader else {
            if let error = writeAll(fd, buffer) { return .failed(error) }
            return .written
        }
        guard var base = buffer.baseAddress else { return .written }
        var left = buffer.count
        while left > 0 {
            let n = noWait ? cloader_write_nowait(fd, base, UInt(left)) : writeWhenReady(base, left)
            if n > 0 {
                left -= n
                base += n
                continue
            }
            if n == 0 { return .failed(EIO) }
            switch errno {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                if cancelled() { return .cancelled }
                waitForRoom()
            case EOPNOTSUPP, ENOSYS, EINVAL:
                // Refused by this descriptor (or kernel): plain writes from here on; from one of them, a failure.
                if !noWait { return .failed(errno) }
                noWait = false
            default:
                return .failed(errno)
            }
        }
        return .written
    }

    /// Without `RWF_NOWAIT`: at most `PIPE_BUF` bytes once `poll` says there
    /// is room; else -1 with `EAGAIN` (the caller asks `cancelled`).
    private func writeWhenReady(_ base: UnsafeRawPointer, _ count: Int) -> Int {
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        if ready < 0 { return -1 }
        if ready == 0 {
            errno = EAGAIN
            return -1
        }
        return write(fd, base, min(count, Self.atomicSize))
    }

    /// Waits until the destination may take a write, or fails one (a reader
    /// gone: the next write says `EPIPE`), or one step has passed.
    private func waitForRoom() {
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        _ = poll(&descriptor, 1, Defaults.deliveryCancelCheckMilliseconds)
    }
}
