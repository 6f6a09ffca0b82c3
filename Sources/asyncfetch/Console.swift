#if canImport(Glibc)
import Glibc
#endif
import func Support.writeAll

/// Direct writes to stdout/stderr through file descriptors (the C `stdout`
/// and `stderr` globals are shared mutable state to Swift 6).
enum Console {
    /// Writes a line to stderr at once (unbuffered, like C's stderr).
    static func error(_ line: String) {
        send(2, Array((line + "\n").utf8))
    }

    /// Writes everything; false when the descriptor refuses (a closed
    /// pipe: `EPIPE`, since SIGPIPE is ignored; a full disk), with `errno`
    /// telling why.
    @discardableResult
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll(fd, $0) == nil }
    }
}

/// A buffered line writer for one file descriptor; `flush` sends it.
final class LineOutput {
    let fd: Int32
    private var buffer: [UInt8] = []
    /// A write failed (the reader of a pipe went away, the disk is full):
    /// nothing more is sent.
    private(set) var broken = false
    /// The `errno` of the failed write, when `broken`.
    private(set) var writeError: Int32 = 0
    /// A progress bar is drawn on stderr: it is erased before the buffer is
    /// written, whoever triggers the write (the reporter draws it).
    var barDrawn = false

    init(fd: Int32) {
        self.fd = fd
        buffer.reserveCapacity(64 * 1024)
    }

    func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= 60 * 1024 { flush() }
    }

    /// One line written straight into the buffer by `build` (which returns
    /// false to write nothing): no intermediate string.
    func line(_ build: (inout [UInt8]) -> Bool) {
        let mark = buffer.count
        guard build(&buffer) else {
            buffer.removeSubrange(mark...)
            return
        }
        buffer.append(0x0A)
        if buffer.count >= 60 * 1024 { flush() }
    }

    var hasPending: Bool { !buffer.isEmpty }

    func eraseBar() {
        guard barDrawn else { return }
        Console.send(2, Array("\r\u{1B}[K".utf8))
        barDrawn = false
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        eraseBar()
        if !broken && !Console.send(fd, buffer) {
            broken = true
            writeError = errno
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
