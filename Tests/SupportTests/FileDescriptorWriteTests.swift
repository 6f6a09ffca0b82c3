import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Support
import Testing

/// The shared write loop: everything arrives, in order, whatever the
/// descriptor takes per call; a refusing descriptor gives its errno.
@Suite struct FileDescriptorWriteTests {
    /// Non-blocking too, as a parent (Node.js, Python) may hand its pipe
    /// over: a full pipe's `EAGAIN` is waited out, not the end of the write.
    @Test(arguments: [false, true])
    func aWriteLargerThanThePipeBufferArrivesWhole(nonBlocking: Bool) throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        if nonBlocking { try #require(fcntl(writeEnd, F_SETFL, O_NONBLOCK) == 0) }
        // 1 MiB: sixteen times Linux's default pipe buffer, so write() returns short and blocks.
        let sent = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) }
        let received = Locked<[UInt8]>([])
        let done = Locked(false)
        try startDetachedThread(name: "pipe reader") {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                received.withLock { $0.append(contentsOf: chunk[0..<n]) }
            }
            done.withLock { $0 = true }
        }
        let error = sent.withUnsafeBytes { writeAll(writeEnd, $0) }
        #expect(error == nil)
        #expect(close(writeEnd) == 0)
        let deadline = monotonicSeconds() + 10
        while !done.withLock({ $0 }) && monotonicSeconds() < deadline { usleep(1000) }
        #expect(received.withLock { $0 } == sent)
        #expect(close(readEnd) == 0)
    }

    @Test func aFileGetsEveryByteAndAnEmptyBufferWritesNothing() throws {
        var template = Array("/tmp/fd-write-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        try #require(fd >= 0)
        defer { _ = unlink(template); _ = close(fd) }
        let text = Array("café ☃\n".utf8)
        #expect(text.withUnsafeBytes { writeAll(fd, $0) } == nil)
        #expect(writeAll(fd, UnsafeRawBufferPointer(start: nil, count: 0)) == nil)
        var info = stat()
        #expect(fstat(fd, &info) == 0 && info.st_size == text.count)
    }

    /// The write runs on a thread of its own that blocks SIGPIPE: the signal a closed pipe raises
    /// is that thread's, stays pending there and goes with the thread, so the process lives to
    /// see the `EPIPE` (as in the executable, which ignores SIGPIPE). The process-wide disposition
    /// is left alone: tests run concurrently in this process, and one that set it back while
    /// another relied on it would let SIGPIPE end the whole test run.
    @Test func aClosedPipeGivesEPIPE() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        #expect(close(ends[0]) == 0)
        defer { _ = close(ends[1]) }
        let writeEnd = ends[1]
        let error = Locked<Int32>(-1)   // the write's errno, 0 for none
        let done = DispatchSemaphore(value: 0)
        try startDetachedThread(name: "closed pipe") {
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            let blocked = pthread_sigmask(SIG_BLOCK, &pipeSignal, nil) == 0
            // Without the block the write would kill the process: none then.
            if blocked { error.withLock { $0 = Array("x".utf8).withUnsafeBytes { writeAll(writeEnd, $0) } ?? 0 } }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(error.withLock { $0 } == EPIPE)
    }

    @Test func aReadOnlyDescriptorGivesEBADF() throws {
        let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0)
        defer { _ = close(fd) }
        #expect(Array("x".utf8).withUnsafeBytes { writeAll(fd, $0) } == EBADF)
    }
}
