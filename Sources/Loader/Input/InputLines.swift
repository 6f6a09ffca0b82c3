import Fetch
import Support
#if canImport(Glibc)
import Glibc
#endif

/// The URL lines of a list file (`--input FILE`; `-`: stdin), read as the batch needs them.
///
/// A dedicated thread reads the file or pipe in chunks and fills a bounded
/// buffer (`Defaults.inputReadAheadLines` / `…Bytes`); the batch awaits
/// lines from it. So a blocking read of a slow pipe never holds a thread of
/// the cooperative pool, and a list of a million lines streams through in
/// constant memory.
///
/// When the task that reads is cancelled (Ctrl-C), the lines are *drained*:
/// what can be read without waiting is still delivered (all of a regular
/// file; what a pipe or terminal already holds), then the sequence ends, so
/// that every URL that was asked for gets its `empty`/`cancelled` report but
/// nobody waits on a producer that may never stop.
public final class InputLines: AsyncSequence, Sendable {
    public typealias Element = String

    /// The name used in messages: the path, or `stdin`.
    public let name: String
    /// The path as given (`-` for stdin), as an unreadable list's message names it.
    public let path: String
    private let fd: Int32
    private let closeWhenDone: Bool
    private let isRegularFile: Bool
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let state = Locked(State())
    /// Signalled when the consumer has taken lines the waiting reader needs room for.
    private let spaceFreed = LockCondition()

    private struct State {
        var queue = FIFO<String>()
        var queuedBytes = 0
        var finished = false
        var draining = false
        var readerWaiting = false
        var waiter: CheckedContinuation<Void, Never>?
        var readLines = 0
        var countedLines: Int?
        var failure: String?
    }

    /// Opens `path` (`-` for stdin) and starts reading ahead. A file that
    /// cannot be opened, a directory, or a stdin that is closed (`<&-`: the
    /// executable reserves descriptor 0 write-only) is an `io` `LoadError` naming it.
    public init(path: String) throws {
        self.path = path
        guard let wake = SelfPipe() else {
            throw LoadError.unreadableList(path, "pipe: \(String(cString: strerror(errno)))")
        }
        wakeRead = wake.readFD
        wakeWrite = wake.writeFD
        if path == "-" {
            name = "stdin"
            fd = 0
            closeWhenDone = false
        } else {
            name = path
            // Not blocking: a FIFO nobody has opened for writing yet blocked this open,
            // and a Ctrl-C then waited for the 3 s grace, with no summary. The reader
            // polls before each read, so it waits for a writer there (it wakes for a
            // cancel), and takes EAGAIN in its stride.
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            closeWhenDone = true
        }
        var info = stat()
        let problem: String?
        if fd < 0 {
            problem = String(cString: strerror(errno))
        } else if fstat(fd, &info) != 0 {
            problem = String(cString: strerror(errno))
        } else if (info.st_mode & S_IFMT) == S_IFDIR {
            problem = "is a directory"
        } else if fcntl(fd, F_GETFL) & O_ACCMODE == O_WRONLY {   // only stdin can be (`0>FILE`, or `<&-`)
            problem = Self.closedStdin
        } else {
            problem = nil
        }
        isRegularFile = fd >= 0 && (info.st_mode & S_IFMT) == S_IFREG
        // Every property is set: a throw from here on runs `deinit`, which closes the descriptors,
        // once. Closed here as well, they were closed twice: whatever another thread had opened
        // under one of their numbers in between was closed under it.
        if let problem { throw LoadError.unreadableList(path, problem) }
        try startDetachedThread(name: "input-reader") { [self] in readLoop() }
    }

    /// Why `-` cannot be read when descriptor 0 is write-only: closed at
    /// start (`<&-`; the executable reserves it write-only) or opened so.
    static let closedStdin = "standard input is closed or not open for reading"

    /// Both threads hold `self`, so the descriptors are closed only once
    /// neither uses them any more; also after `init` threw (a list that
    /// cannot be read, no thread for it), and only here.
    deinit {
        if closeWhenDone && fd >= 0 { close(fd) }
        close(wakeRead)
        close(wakeWrite)
    }

    /// Lines delivered so far, and the number of URL lines in all when known
    /// (at the end of the input, or earlier from `countAhead()`).
    public var progress: (read: Int, total: Int?) {
        state.withLock { ($0.readLines, $0.finished ? $0.readLines + $0.queue.count : $0.countedLines) }
    }

    /// Why reading stopped early (an I/O error), once the sequence has ended.
    /// The lines read before it were delivered; a last line without its
    /// newline was not (it is likely cut short).
    public var readError: String? { state.withLock { $0.failure } }

    /// For a regular file, counts its URL lines on another thread (with
    /// `pread`, so the reader's offset is untouched): the progress bar can
    /// then show a total before the list has been read.
    public func countAhead() {
        guard isRegularFile else { return }
        bestEffort("the progress bar shows no total until the list has been read") {
            try startDetachedThread(name: "input-counter") { [self] in
                var count = 0
                // A read error ends the count early: the end of the input corrects it.
                _ = LineSplitter.readAll(fd, from: 0) { _ in count += 1 }
                state.withLock { state in if state.countedLines == nil { state.countedLines = count } }
            }
        }
    }

    /// Every URL line of `path` (`-`: stdin) at once, for a short list (the
    /// `cache` commands); a line too long to keep becomes `overlong(number)`.
    public static func readAll(path: String, overlong: (Int) -> String) throws(LoadError) -> [String] {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadableList(path, String(cString: strerror(errno))) }
        defer { if fd != 0 { close(fd) } }
        if fd == 0 && fcntl(fd, F_GETFL) & O_ACCMODE == O_WRONLY { throw .unreadableList(path, Self.closedStdin) }
        var lines: [String] = []
        let failed = LineSplitter.readAll(fd) { line in
            switch line {
            case .text(let bytes): lines.append(textPercentEncodingInvalidUTF8(bytes))
            case .overlong(let number): lines.append(overlong(number))
            }
        }
        if let failed { throw .unreadableList(path, String(cString: strerror(failed))) }
        return lines
    }

    // MARK: - Consumer side (the batch)

    public struct AsyncIterator: AsyncIteratorProtocol {
        let lines: InputLines
        public mutating func next() async -> String? { await lines.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(lines: self) }

    private enum Step { case lines([String]), end, wait }

    public func next() async -> String? {
        await nextChunk(limit: 1).first
    }

    /// Between 1 and `limit` lines, waiting only for the first (under one
    /// lock); empty at the end.
    public func nextChunk(limit: Int) async -> [String] {
        while true {
            let step: Step = state.withLock { state in
                if !state.queue.isEmpty {
                    let lines = state.queue.popFirst(upTo: Swift.max(1, limit))
                    for line in lines { state.queuedBytes -= line.utf8.count }
                    state.readLines += lines.count
                    // The reader waits for half the buffer to drain, not for
                    // each line: one wake-up per 512 lines, not per line.
                    if state.readerWaiting && state.queue.count <= Defaults.inputReadAheadLines / 2 {
                        state.readerWaiting = false
                        spaceFreed.signal()
                    }
                    return .lines(lines)
                }
                if state.finished { return .end }
                if Task.isCancelled { requestDrain(&state) }
                return .wait
            }
            switch step {
            case .lines(let lines): return lines
            case .end: return []
            case .wait:
                await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let ready = state.withLock { state -> Bool in
                            if !state.queue.isEmpty || state.finished { return true }
                            state.waiter = continuation
                            return false
                        }
                        if ready { continuation.resume() }
                    }
                } onCancel: {
                    state.withLock { requestDrain(&$0) }
                }
            }
        }
    }

    /// Switches the reader to "no more waiting"; it finishes once nothing
    /// more is readable at once. The waiter is resumed by the reader.
    private func requestDrain(_ state: inout State) {
        guard !state.draining else { return }
        state.draining = true
        var byte: UInt8 = 1
        // One byte, once (`draining`), into a pipe only this writes: never full, so it fails only
        // when a signal interrupts it, and then goes again (the reader waits for it in `poll`).
        while write(wakeWrite, &byte, 1) < 0 && errno == EINTR {}
    }

    // MARK: - Reader thread

    private func readLoop() {
        var splitter = LineSplitter(maxLineBytes: Defaults.inputMaxLineBytes)
        var chunk = [UInt8](repeating: 0, count: Defaults.inputChunkBytes)
        var error: String?
        reading: while true {
            let drain = state.withLock { $0.draining }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, drain ? 0 : -1)
            if ready < 0 {
                if errno == EINTR { continue }
                error = "poll: " + String(cString: strerror(errno))
                break
            }
            if fds[1].revents != 0 {
                var sink = [UInt8](repeating: 0, count: 64)
                // The wake byte, read only to empty the pipe: `draining` says what it meant.
                _ = read(wakeRead, &sink, sink.count)
                continue
            }
            if ready == 0 { break }   // draining, and nothing more to read at once
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                error = String(cString: strerror(errno))
                break
            }
            if n == 0 { break }
            chunk.withUnsafeBufferPointer { buffer in
                splitter.feed(UnsafeBufferPointer(rebasing: buffer[0..<n])) { push($0) }
            }
        }
        // After a read error the last line, if it has no newline, is likely cut
        // short: fetching it would fetch a URL nobody wrote.
        if error == nil { splitter.finish { push($0) } }
        let resume = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.finished = true
            state.failure = error
            defer { state.waiter = nil }
            return state.waiter
        }
        resume?.resume()
    }

    /// Hands one line to the consumer, waiting while the buffer is full.
    private func push(_ line: LineSplitter.Line) {
        let text: String
        switch line {
        case .text(let bytes): text = textPercentEncodingInvalidUTF8(bytes)
        case .overlong(let number):
            text = "<line \(number) of \(name): longer than \(HumanUnits.bytes(Int64(Defaults.inputMaxLineBytes)))>"
        }
        let resume = state.withLock(when: spaceFreed, { state in
            let full = !state.queue.isEmpty
                && (state.queue.count >= Defaults.inputReadAheadLines || state.queuedBytes >= Defaults.inputReadAheadBytes)
            if full { state.readerWaiting = true }
            return !full
        }) { state -> CheckedContinuation<Void, Never>? in
            state.queue.append(text)
            state.queuedBytes += text.utf8.count
            defer { state.waiter = nil }
            return state.waiter
        }
        resume?.resume()
    }
}
