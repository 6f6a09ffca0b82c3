import Glibc
import Loader
import Support
import Synchronization
import Testing
import TestSupport

/// An `--input` list that cannot be read closes each of its descriptors once.
/// `InputLines.init` closed them and threw; the object was whole by then, so
/// its `deinit` ran and closed the same numbers again: whatever another thread
/// had opened under one of them in between (a socket, a cache file) was closed
/// under it.
@Suite(.timeLimit(.minutes(3))) struct InputLinesDescriptorTests {
    /// Opens and closes `/dev/null` on its own thread until told to stop,
    /// counting the descriptors someone else closed (or replaced) under it.
    final class Neighbour: Sendable {
        let stop = Atomic<Bool>(false)
        let opened = Atomic<Int>(0)
        let closedUnderIt = Atomic<Int>(0)
        let started = WakeSemaphore()
        let ended = WakeSemaphore()

        func run() {
            while !stop.load(ordering: .relaxed) {
                let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { continue }
                if opened.add(1, ordering: .relaxed).newValue == 1 { started.post() }
                var info = stat()
                let still = fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFCHR
                // EBADF: closed under it; not a character device: closed, then the number reused.
                if close(fd) != 0 || !still { closedUnderIt.add(1, ordering: .relaxed) }
            }
            ended.post()
        }
    }

    @Test func aListThatCannotBeReadClosesEachDescriptorOnce() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-input-fds")
        let neighbour = Neighbour()
        try startDetachedThread(name: "fd-neighbour") { neighbour.run() }
        neighbour.started.wait()   // it runs: each round below races its opens
        var rounds = 0
        // Bounded: 5,000 failed opens (about a second on a loaded machine); the old code was caught within the first thousand.
        while rounds < 5_000 && neighbour.closedUnderIt.load(ordering: .relaxed) == 0 {
            #expect(throws: LoadError.self) { try InputLines(path: temp.path) }   // a directory
            rounds += 1
        }
        neighbour.stop.store(true, ordering: .relaxed)
        neighbour.ended.wait()
        let closed = neighbour.closedUnderIt.load(ordering: .relaxed)
        #expect(closed == 0, "another thread's descriptor closed under it \(closed) times in \(rounds) rounds")
    }
}
