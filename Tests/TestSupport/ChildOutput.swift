import Dispatch
import Glibc

/// Feeds a child's stdin and collects its stdout and stderr on one thread, `poll(2)` over the
/// three pipes: however much the child writes on either stream, or leaves unread, neither side
/// waits for the other. The thread owns the descriptors and closes each at its end (stdin once
/// fed: the child then sees EOF).
final class ChildOutput: @unchecked Sendable {
    /// What the lock guards.
    private struct Captured {
        var stdout: [UInt8] = []
        var stderr: [UInt8] = []
        /// Set by `finish`: stop even though a pipe is still open (a grandchild may hold it).
        var abandoned = false
        /// A read, write or poll that failed other than EINTR/EAGAIN, with its errno text.
        var failure: String?
    }

    private let captured = TSLocked(Captured())
    private let done = DispatchSemaphore(value: 0)
    private let thread: pthread_t

    /// Takes `stdinFD` (fed `input`, then closed), `stdoutFD` and `stderrFD`; -1 for none.
    init(stdinFD: Int32, input: [UInt8], stdoutFD: Int32, stderrFD: Int32) throws {
        let captured = captured, done = done
        guard let thread = tsSpawnThread({
            Self.pump(stdin: stdinFD, input: input, stdout: stdoutFD, stderr: stderrFD, into: captured)
            done.signal()
        }) else {
            [stdinFD, stdoutFD, stderrFD].forEach(tsClose)
            throw TestSupportError.message("pthread_create failed: no thread to read the child's output")
        }
        self.thread = thread
    }

    var stdout: [UInt8] { captured.withLock { $0.stdout } }
    var stderr: [UInt8] { captured.withLock { $0.stderr } }

    /// After the child's exit: waits up to `grace` seconds for EOF on both pipes (a grandchild
    /// that inherited one holds it open), then stops reading. Returns the first I/O failure.
    func finish(grace: Double) -> String? {
        if done.wait(timeout: .now() + grace) == .timedOut {
            captured.withLock { $0.abandoned = true }
            done.wait()
        }
        done.signal()
        tsJoinThread(thread)
        return captured.withLock { $0.failure }
    }

    /// The thread's body. SIGPIPE is blocked in this thread, so a child that exits without
    /// reading its stdin gives EPIPE here; the pending signal is discarded with the thread.
    /// (This process leaves SIGPIPE at its default, which ends it: neither libcurl, with
    /// CURLOPT_NOSIGNAL, nor the Fetch library touches the disposition; Fetch blocks SIGPIPE
    /// on its own loop threads only.)
    private static func pump(stdin: Int32, input: [UInt8], stdout: Int32, stderr: Int32, into captured: TSLocked<Captured>) {
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
        var open = (stdin: stdin, stdout: stdout, stderr: stderr)
        func fail(_ call: String, _ error: Int32) {
            let text = "\(call): \(String(cString: strerror(error))) (errno \(error))"
            captured.withLock { if $0.failure == nil { $0.failure = text } }
        }
        if open.stdin >= 0 {
            let flags = fcntl(open.stdin, F_GETFL)
            if input.isEmpty || flags < 0 || fcntl(open.stdin, F_SETFL, flags | O_NONBLOCK) != 0 {
                if !input.isEmpty { fail("fcntl(O_NONBLOCK) on the child's stdin", errno) }
                tsClose(open.stdin)
                open.stdin = -1
            }
        }
        var fed = 0
        var chunk = [UInt8](repeating: 0, count: 65536)
        while open.stdin >= 0 || open.stdout >= 0 || open.stderr >= 0 {
            if captured.withLock({ $0.abandoned }) { break }
            var fds = [pollfd(fd: open.stdin, events: Int16(POLLOUT), revents: 0),
                       pollfd(fd: open.stdout, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: open.stderr, events: Int16(POLLIN), revents: 0)]   // poll skips fd -1
            if poll(&fds, nfds_t(fds.count), 100) < 0 {
                if errno == EINTR { continue }
                fail("poll on the child's pipes", errno)
                break
            }
            if fds[0].revents != 0 {
                let n = input.withUnsafeBytes { write(open.stdin, $0.baseAddress! + fed, min($0.count - fed, 65536)) }
                let error = errno
                if n > 0 { fed += n }
                let stopped = n < 0 && error != EINTR && error != EAGAIN
                if stopped && error != EPIPE { fail("write to the child's stdin", error) }
                if fed == input.count || stopped {   // fed, or the child stopped reading (EPIPE)
                    tsClose(open.stdin)
                    open.stdin = -1
                }
            }
            for (index, stream) in [(1, \Captured.stdout), (2, \Captured.stderr)] where fds[index].revents != 0 {
                let n = chunk.withUnsafeMutableBytes { read(fds[index].fd, $0.baseAddress, $0.count) }
                let error = errno
                if n > 0 {
                    captured.withLock { $0[keyPath: stream].append(contentsOf: chunk[0..<n]) }
                } else if n == 0 || (error != EINTR && error != EAGAIN) {
                    if n < 0 { fail("read from the child's \(index == 1 ? "stdout" : "stderr")", error) }
                    tsClose(fds[index].fd)
                    if index == 1 { open.stdout = -1 } else { open.stderr = -1 }
                }
            }
        }
        [open.stdin, open.stdout, open.stderr].forEach(tsClose)
    }
}
