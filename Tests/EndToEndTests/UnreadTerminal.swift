import Foundation
import Glibc
import Testing

/// A pseudo-terminal whose master side nobody reads (a terminal paused or
/// never drained): a process given its slave as stdout fills it and then has
/// no room for a write.
struct UnreadTerminal {
    /// The master side, never read while the test runs.
    let master: Int32
    /// The slave side opened by the test (non-blocking, not as a controlling
    /// terminal), only to ask whether it has room.
    let slave: Int32
    /// The slave's path (`/dev/pts/N`), for the process's stdout.
    let name: String

    init() throws {
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        try #require(master >= 0, "open /dev/ptmx: \(String(cString: strerror(errno)))")
        // TIOCSPTLCK (unlock the slave) and TIOCGPTN (its number): Linux's, not imported (macros).
        var unlock: Int32 = 0, number: UInt32 = 0
        try #require(ioctl(master, 0x4004_5431, &unlock) == 0 && ioctl(master, 0x8004_5430, &number) == 0,
                     "TIOCSPTLCK/TIOCGPTN: \(String(cString: strerror(errno)))")
        name = "/dev/pts/\(number)"
        slave = open(name, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        try #require(slave >= 0, "open \(name): \(String(cString: strerror(errno)))")
    }

    func close() {
        _ = Glibc.close(slave)
        _ = Glibc.close(master)
    }

    /// The slave has no room for a write (`poll` without `POLLOUT`): what
    /// was written fills the terminal's buffers.
    var full: Bool {
        var descriptor = pollfd(fd: slave, events: Int16(POLLOUT), revents: 0)
        var ready: Int32
        repeat { ready = poll(&descriptor, 1, 0) } while ready < 0 && errno == EINTR
        return ready == 0
    }

    /// Waits until a writer has filled the terminal (up to `seconds`, which
    /// only ends a hang). False when it did not fill it in time.
    func waitUntilFull(seconds: Double = 60) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !full && Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        return full
    }
}
