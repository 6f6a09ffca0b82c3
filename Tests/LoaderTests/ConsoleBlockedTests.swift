#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Loader
import Testing

/// Which outputs have no room for a write (`Console.blocked`), on real pipes:
/// what an interrupted run asks before it writes its last lines. No time is
/// measured: a blocked pipe stays blocked however long the wait, and one
/// drained during a long wait is not blocked whenever the drain comes.
@Suite struct ConsoleBlockedTests {
    /// A pipe; the caller closes its ends.
    struct Pipe {
        let read: Int32
        let write: Int32

        /// Close-on-exec (`SelfPipe`): a test that spawns a process at the same time must not hold its read end.
        init() throws {
            let ends = try #require(SelfPipe())
            read = ends.readFD
            write = ends.writeFD
        }

        /// Writes until the pipe has no room (a non-blocking write says so), then makes the write end blocking again.
        func fill() {
            let flags = fcntl(write, F_GETFL)
            _ = fcntl(write, F_SETFL, flags | O_NONBLOCK)
            let chunk = [UInt8](repeating: 1, count: 4096)
            while chunk.withUnsafeBytes({ Glibc.write(write, $0.baseAddress, $0.count) }) > 0 {}
            _ = fcntl(write, F_SETFL, flags)
        }

        func close() {
            Glibc.close(read)
            Glibc.close(write)
        }
    }

    @Test func aFullPipeIsBlockedAndOneWithRoomIsNot() throws {
        let full = try Pipe()
        let empty = try Pipe()
        defer { full.close(); empty.close() }
        full.fill()
        #expect(Console.blocked([empty.write, full.write], waiting: 0) == [full.write])
        #expect(Console.blocked([full.write, empty.write, full.write], waiting: 0.05) == [full.write, full.write], "in order")
        #expect(Console.blocked([empty.write], waiting: 0).isEmpty)
    }

    /// A write that would fail at once is no wait: a pipe whose reader has
    /// gone (`EPIPE`), a descriptor that is not open.
    @Test func anOutputThatRefusesWritesIsNotBlocked() throws {
        let orphan = try Pipe()
        orphan.fill()
        Glibc.close(orphan.read)
        defer { Glibc.close(orphan.write) }
        // A number no descriptor can have (the open-files limit), not one just closed, which
        // another thread of the test process could open meanwhile.
        var limit = rlimit()
        try #require(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
        let never = Int32(clamping: limit.rlim_cur)
        #expect(Console.blocked([orphan.write, never], waiting: 0).isEmpty)
    }

    /// A full pipe that its reader drains during the wait has room: the
    /// wait ends with the room, not the deadline (60 s, never reached).
    @Test func aPipeDrainedDuringTheWaitIsNotBlocked() async throws {
        let full = try Pipe()
        defer { full.close() }
        full.fill()
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            _ = buffer.withUnsafeMutableBytes { Glibc.read(full.read, $0.baseAddress, $0.count) }
        }
        reader.start()
        #expect(Console.blocked([full.write], waiting: 60).isEmpty)
    }
}
