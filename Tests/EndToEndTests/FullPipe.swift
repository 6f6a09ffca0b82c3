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
