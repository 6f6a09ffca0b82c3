#if canImport(Glibc)
import Glibc
#endif
import func Support.writeAll
import enum Fetch.Defaults

/// Writes buffered result lines to a descriptor so that its reader only ever
/// gets whole lines, however abruptly the process ends (SPEC §3: every
/// `--json` line is one JSON object; §6: a second Ctrl-C exits at once).
///
/// Why it is needed: `_exit` leaves in a pipe exactly what the writes had put
/// there. A blocking write to a pipe whose reader has stalled puts in what
/// fits and waits for the rest; if the process exits meanwhile (a second
/// Ctrl-C), the pipe ends inside a line. No wait before the exit can help:
/// the reader may never read again, and the exit is due at once.
///
/// The rule, for a pipe or FIFO: every write is one the kernel takes whole
/// or not at all, and ends at the end of a line. Such a write is
///
/// 1. whole lines of at most `PIPE_BUF` (4,096) bytes together: POSIX makes
///    it atomic, so a writer blocked by a full pipe waits with nothing of it
///    written, between two lines;
/// 2. when the pipe is empty, whole lines up to its capacity less one page
///    (`F_GETPIPE_SZ`; the page is the machine's, `sysconf(_SC_PAGESIZE)`:
///    4 KiB on x86-64, 16 or 64 KiB on some arm64 kernels, where a pipe's
///    buffers are pages that size; Linux: an empty pipe has all its pages free, so the
///    write never waits; the spare page is for a short write another writer
///    of the pipe, such as stderr under `2>&1`, may make in between). A
///    reader that keeps up leaves the pipe empty, so a 60 KiB buffer still
///    goes in one `write` (and one `FIONREAD`), not 15;
/// 3. one line longer than `PIPE_BUF` on its own, once the pipe is empty
///    (its fill level, `FIONREAD`, polled every
///    `Defaults.pipeEmptyPollMilliseconds`), after growing
///    the pipe (`F_SETPIPE_SZ`) if the line is longer than its capacity.
///    Only a line longer than the pipe can be made (`/proc/sys/fs/pipe-max-size`,
///    1 MiB by default, or one page for a user over `pipe-user-pages-soft`)
///    may still be cut, if its reader stalls in the middle of it.
///
/// Everything else (a file, `/dev/null`, `/dev/full`, a terminal, a socket)
/// gets the whole buffer in one write, as before: a file never waits for a
/// reader. On a terminal stopped with Ctrl-S a second Ctrl-C may leave a cut
/// line on the screen, which no program parses.
///
/// A descriptor its parent made non-blocking keeps all of this: a write of
/// at most `PIPE_BUF` bytes is then taken whole or refused with `EAGAIN`,
/// and `writeAll` waits out `EAGAIN` as a blocking write would wait.
struct WholeLineWriter {
    let fd: Int32
    /// Whether `fd` is a pipe or a FIFO, which the rule above is for (asked once).
    let isPipe: Bool
    /// The pipe's capacity in bytes (`F_GETPIPE_SZ`), 0 when unknown; grown by rule 3.
    private var capacity: Int

    /// Linux's `PIPE_BUF`: writes up to this size are atomic (`pipe(7)`),
    /// whatever the page size.
    static let atomicSize = 4096
    /// The machine's page size: a pipe's buffers are pages (rule 2).
    /// `PIPE_BUF` if `sysconf` cannot tell, which never happens on Linux.
    static let pageSize: Int = {
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? size : atomicSize
    }()
    /// `F_SETPIPE_SZ` / `F_GETPIPE_SZ` (`<fcntl.h>`, Linux; `_GNU_SOURCE` only, so not imported).
    private static let setPipeSize: Int32 = 1031
    private static let getPipeSize: Int32 = 1032

    init(fd: Int32) {
        self.fd = fd
        var info = stat()
        isPipe = fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO
        capacity = isPipe ? max(0, Int(fcntl(fd, Self.getPipeSize))) : 0
    }

    /// Writes `bytes`, which are whole lines (they end with a newline): nil
    /// when done, else the `errno` of the write that failed. With `mayWait`
    /// false (the process is on its way to `_exit`), never waits for room:
    /// it stops at the end of a line when the pipe is full, the rest unwritten.
    mutating func write(_ bytes: UnsafeRawBufferPointer, mayWait: Bool = true) -> Int32? {
        guard isPipe, bytes.count > Self.atomicSize || !mayWait, let base = bytes.baseAddress else {
            return writeAll(fd, bytes)
        }
        var start = 0
        while start < bytes.count {
            let rest = bytes.count - start
            var limit = Self.atomicSize
            if rest > limit && queuedBytes() == 0 { limit = Self.emptyPipeLimit(capacity: capacity, pageSize: Self.pageSize) }
            var end = Self.lastLineEnd(bytes, from: start, within: min(rest, limit))
            if end == start {   // rule 3: one line longer than `PIPE_BUF`
                end = Self.firstLineEnd(bytes, from: start)
                if !mayWait && !(queuedBytes() == 0 && end - start <= capacity) { return nil }
                makeRoom(for: end - start)
            } else if !mayWait && !hasRoom() {
                return nil
            }
            if let error = writeAll(fd, UnsafeRawBufferPointer(start: base + start, count: end - start)) { return error }
            start = end
        }
        return nil
    }

    /// Rule 2: what one write may put into an empty pipe of `capacity`
    /// bytes, its capacity less one page (never less than `PIPE_BUF`).
    static func emptyPipeLimit(capacity: Int, pageSize: Int) -> Int {
        max(atomicSize, capacity - pageSize)
    }

    /// Rule 3: grows the pipe to hold `count` bytes if it cannot, then waits
    /// until it is empty (or has no reader left: the write then fails; or
    /// its fill level cannot be read: the line goes as it is).
    private mutating func makeRoom(for count: Int) {
        if count > capacity {
            let grown = fcntl(fd, Self.setPipeSize, Int32(clamping: count))
            if grown > 0 { capacity = Int(grown) }   // refused (EPERM over the limits): written anyway
        }
        // No events asked: `poll` only sleeps a moment, or reports that the reader is gone.
        var descriptor = pollfd(fd: fd, events: 0, revents: 0)
        while let queued = queuedBytes(), queued > 0 {
            let ready = poll(&descriptor, 1, Defaults.pipeEmptyPollMilliseconds)
            if ready > 0 && descriptor.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return }
            if ready < 0 && errno != EINTR { return }
        }
    }

    /// The bytes waiting in the pipe to be read (`FIONREAD`), nil when unknown.
    private func queuedBytes() -> Int32? {
        var queued: Int32 = 0
        return ioctl(fd, UInt(FIONREAD), &queued) == 0 ? queued : nil
    }

    /// Whether a write of up to `PIPE_BUF` bytes would not wait now (`POLLOUT`:
    /// a page of the pipe is free). True for a pipe with no reader: the write
    /// then fails at once.
    private func hasRoom() -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// The end (just past its newline) of the last line that ends within
    /// `length` bytes of `start`; `start` when the first line is longer.
    static func lastLineEnd(_ bytes: UnsafeRawBufferPointer, from start: Int, within length: Int) -> Int {
        var index = start + length
        while index > start {
            if bytes[index - 1] == 0x0A { return index }
            index -= 1
        }
        return start
    }

    /// The end of the line that starts at `start` (the end of `bytes` when it has no newline).
    static func firstLineEnd(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        guard let base = bytes.baseAddress, let found = memchr(base + start, 0x0A, bytes.count - start) else {
            return bytes.count
        }
        return base.distance(to: UnsafeRawPointer(found)) + 1
    }
}
