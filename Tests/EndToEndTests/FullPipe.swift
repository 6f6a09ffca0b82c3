import Glibc
import Testing

/// A FIFO already full when a run starts: a process given it as stdout or
/// stderr blocks at its first write until the test reads (a pipe nobody reads).
struct FullPipe {
    /// The read end (non-blocking); the FIFO stays full while it is open.
    let reader: Int32
    /// Bytes written to fill it, ahead of anything the run writes.
    let filled: Int

    init(at path: String) throws {
        #expect(mkfifo(path, 0o600) == 0)
        reader = open(path, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        let filler = open(path, O_WRONLY | O_NONBLOCK)
        try #require(filler >= 0)
        var filled = 0
        let chunk = [UInt8](repeating: UInt8(ascii: "x"), count: 4096)
        while true {
            let n = chunk.withUnsafeBytes { write(filler, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            filled += n
        }
        close(filler)
        self.filled = filled
    }
}

extension FullPipe {
    /// Bytes waiting in the FIFO (`FIONREAD`).
    var queued: Int {
        var count: Int32 = 0
        return ioctl(reader, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
    }

    /// Reads `room` bytes of the filling out, then waits (up to `seconds`)
    /// until the writer has filled the pipe again: a writer with more than
    /// `room` bytes to write is then held up by the full pipe. False when it
    /// did not fill it in time.
    func makeRoomAndWaitUntilRefilled(_ room: Int = 8192, seconds: Double = 60) async throws -> Bool {
        var scratch = [UInt8](repeating: 0, count: room)
        let taken = scratch.withUnsafeMutableBytes { read(reader, $0.baseAddress, room) }
        try #require(taken == room)
        let deadline = monotonicNow() + seconds
        while queued < filled && monotonicNow() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        return queued >= filled
    }

    private func monotonicNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
