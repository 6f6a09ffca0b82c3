import CLoader
#if canImport(Glibc)
import Glibc
#endif
import enum Fetch.Defaults

/// Writes a body to a destination whose reader may never read it (standard
/// output or a FIFO into a pipe nobody drains, a socket, a terminal stopped
/// with Ctrl-S or never read) so that a cancellation ends the wait (SPEC §6:
/// Ctrl-C reports the URL `cancelled` and prints the summary). A blocking
/// `write` there waited for good and ignored the cancelled task.
///
/// No write ever waits in the kernel: `pwritev2` with `RWF_NOWAIT` writes
/// what fits and refuses with `EAGAIN` when nothing does, without setting
/// `O_NONBLOCK` on standard output (that flag lives on the open file, which
/// the shell and the reader's side of a terminal share). Where `RWF_NOWAIT`
/// is refused (`EOPNOTSUPP`: a terminal; a pipe before Linux 6.4),
/// the writes are plain ones on a descriptor with `O_NONBLOCK`: `-o FILE`'s
/// own (`openForDelivery`), or for standard output a new open file of the
/// same destination (`/proc/self/fd/1`), whose flag nobody else sees.
/// Between writes the writer waits for room (`poll`, `POLLOUT`) in steps of
/// `Defaults.deliveryCancelCheckMilliseconds`, asking `cancelled` after each.
/// Cancellation is asked only when the destination has no room: a reader
/// that keeps up gets the whole body, however late the cancel comes.
///
/// A regular file never waits for a reader: it gets plain writes. So does a
/// destination that could be given neither (no `/proc`, a socket that
/// refuses `RWF_NOWAIT`): its writes may wait for good, which
/// `Console.bodyCopyMayBlockStandardOutput` tells an interrupted run.
struct CancellableWrite {
    enum Outcome: Equatable {
        case written
        /// The `errno` of the write (or the wait for room) that failed.
        case failed(Int32)
        /// `cancelled` said so while the destination had no room.
        case cancelled
    }

    private enum Mode {
        /// `pwritev2` with `RWF_NOWAIT` (until the descriptor refuses it once).
        case noWait
        /// Plain writes on a descriptor with `O_NONBLOCK`.
        case nonBlocking
        /// Plain writes that may wait in the kernel: a regular file (it waits for no
        /// reader), or a destination neither of the above could be had for.
        case blocking
    }

    /// The descriptor the caller gave (and still owns).
    let fd: Int32
    /// Where the writes go: `fd`, or `reopened`.
    private var target: Int32
    /// `fd` opened again with `O_NONBLOCK` (owned here: `end` closes it).
    private var reopened: Int32?
    private var mode: Mode

    init(fd: Int32) {
        self.fd = fd
        target = fd
        var info = stat()
        let regular = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        mode = regular ? .blocking : .noWait
    }

    /// Writes all of `buffer`, or stops when `cancelled` (asked only while the
    /// destination has no room), or at the first write that fails.
    mutating func send(_ buffer: UnsafeRawBufferPointer, cancelled: () -> Bool) -> Outcome {
        guard var base = buffer.baseAddress else { return .written }
        var left = buffer.count
        while left > 0 {
            let n = mode == .noWait ? cloader_write_nowait(target, base, UInt(left)) : write(target, base, left)
            if n > 0 {
                left -= n
                base += n
                continue
            }
            if n == 0 { return .failed(EIO) }
            let code = errno
            switch code {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                if cancelled() { return .cancelled }
                if let error = waitForRoom() { return .failed(error) }
            case EOPNOTSUPP, ENOSYS, EINVAL:
                // Refused by this descriptor (or kernel): another way of not waiting; from a plain write, a failure.
                guard mode == .noWait else { return .failed(code) }
                if let error = leaveNoWait() { return .failed(error) }
            default:
                return .failed(code)
            }
        }
        return .written
    }

    /// Closes the descriptor opened here, if any: its `errno` if that failed.
    mutating func end() -> Int32? {
        guard let own = reopened else { return nil }
        reopened = nil
        target = fd
        return close(own) == 0 ? nil : errno
    }

    /// After `RWF_NOWAIT` was refused: `fd` itself if it has `O_NONBLOCK`
    /// (`-o FILE`), else for a pipe or a terminal a new open file of its
    /// destination with it, else (no such open: no `/proc`; a socket or a
    /// device, which a second open could refuse or disturb) plain writes
    /// that may wait.
    private mutating func leaveNoWait() -> Int32? {
        let flags = fcntl(fd, F_GETFL)
        if flags < 0 { return errno }
        if flags & O_NONBLOCK != 0 {
            mode = .nonBlocking
            return nil
        }
        var info = stat()
        if fstat(fd, &info) != 0 { return errno }
        var own: Int32 = -1
        if info.st_mode & S_IFMT == S_IFIFO || isatty(fd) == 1 {
            repeat {
                own = open("/proc/self/fd/\(fd)", O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
            } while own < 0 && errno == EINTR
        }
        if own >= 0 {
            reopened = own
            target = own
            mode = .nonBlocking
        } else {
            mode = .blocking
            if fd == 1 { Console.noteBodyCopyMayBlockStandardOutput() }
        }
        return nil
    }

    /// Waits until the destination may take a write, or fails one (a reader
    /// gone: the next write says `EPIPE`), or one step has passed; the
    /// `errno` of a `poll` that failed.
    private func waitForRoom() -> Int32? {
        var descriptor = pollfd(fd: target, events: Int16(POLLOUT), revents: 0)
        while poll(&descriptor, 1, Defaults.deliveryCancelCheckMilliseconds) < 0 {
            if errno != EINTR { return errno }
        }
        return nil
    }
}
