import enum Fetch.Defaults

/// A buffered line writer for one file descriptor; `flush` sends it. It
/// owns the buffer of result lines and the memory of a write that failed,
/// and erases a progress bar drawn on stderr before it writes. The buffer
/// only ever holds whole lines, and `WholeLineWriter` sends them so that a
/// pipe's reader never gets part of a line, even from a process that exits
/// in the middle of a flush. Public: the tool's `cache list` writes its
/// lines through it too. Not thread-safe: one owner (the `Reporter` keeps
/// it under its lock).
public final class LineOutput {
    private var writer: WholeLineWriter
    private var buffer: [UInt8] = []
    /// A write failed (the reader of a pipe went away, the disk is full):
    /// nothing more is sent.
    public private(set) var broken = false
    /// The `errno` of the failed write, when `broken`.
    public private(set) var writeError: Int32 = 0
    /// A progress bar is drawn on stderr: it is erased before the buffer is
    /// written, whoever triggers the write (the reporter draws it).
    var barDrawn = false

    public init(fd: Int32) {
        writer = WholeLineWriter(fd: fd)
        buffer.reserveCapacity(Defaults.outputBufferBytes)
    }

    /// `text` and a newline, buffered (sent once `Defaults.outputFlushBytes` are waiting).
    public func line(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        if buffer.count >= Defaults.outputFlushBytes { flush() }
    }

    /// One line written straight into the buffer by `build` (which returns
    /// false to write nothing): no intermediate string.
    func line(_ build: (inout [UInt8]) -> Bool) {
        if Self.line(build, into: &buffer) { flush() }
    }

    /// `line`'s work on the buffer, under one access to it (each use of the
    /// property was an exclusivity check of its own: three a line, ~65
    /// instructions each); true when the buffer is due to be sent.
    private static func line(_ build: (inout [UInt8]) -> Bool, into buffer: inout [UInt8]) -> Bool {
        let mark = buffer.count
        guard build(&buffer) else {
            buffer.removeSubrange(mark...)
            return false
        }
        buffer.append(0x0A)
        return buffer.count >= Defaults.outputFlushBytes
    }

    func eraseBar() {
        guard barDrawn else { return }
        Console.send(2, Array("\r\u{1B}[K".utf8))
        barDrawn = false
    }

    /// Sends what is buffered, erasing a drawn bar first; a failed write
    /// sets `broken` and `writeError`, and nothing is sent after it.
    public func flush() {
        send(mayWait: true)
    }

    /// `flush` for a process on its way to `_exit` (a second Ctrl-C): writes
    /// what a pipe has room for now, whole lines only, and drops the rest.
    func flushWithoutWaiting() {
        send(mayWait: false)
    }

    private func send(mayWait: Bool) {
        guard !buffer.isEmpty else { return }
        eraseBar()
        if !broken, let error = buffer.withUnsafeBytes({ writer.write($0, mayWait: mayWait) }) {
            broken = true
            writeError = error
        }
        buffer.removeAll(keepingCapacity: true)
    }
}
