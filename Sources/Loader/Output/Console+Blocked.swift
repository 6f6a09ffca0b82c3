#if canImport(Glibc)
import Glibc
#endif
import func Support.monotonicSeconds
import Synchronization

extension Console {
    private static let bodyCopyMayBlock = Atomic<Bool>(false)

    /// A body's copy to standard output (`-o -`) writes there in a way that
    /// may wait for good: its descriptor refused `RWF_NOWAIT` and could not be
    /// opened again with `O_NONBLOCK` (`CancellableWrite`), so a cancel does
    /// not end it. An interrupted run then asks `blocked` about standard
    /// output too. Once set, stays set.
    public static var bodyCopyMayBlockStandardOutput: Bool { bodyCopyMayBlock.load(ordering: .acquiring) }

    static func noteBodyCopyMayBlockStandardOutput() { bodyCopyMayBlock.store(true, ordering: .releasing) }

    /// Of `descriptors`, in order, those that have had no room for a write
    /// for `seconds` (a write to them would block: a full pipe nobody reads,
    /// a terminal stopped with Ctrl-S). One that takes writes, or refuses
    /// them at once (a closed pipe, a bad descriptor), is not blocked. The
    /// wait is one deadline for all, not `seconds` each. What an interrupted
    /// run asks before it writes its last lines (SPEC §6: a write to a full
    /// pipe would never end).
    public static func blocked(_ descriptors: [Int32], waiting seconds: Double) -> [Int32] {
        let deadline = monotonicSeconds() + seconds
        return descriptors.filter { fd in
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            var ready: Int32
            repeat {
                let left = max(0, deadline - monotonicSeconds())
                ready = poll(&descriptor, 1, Int32((left * 1000).rounded(.up)))
            } while ready < 0 && errno == EINTR
            return ready == 0
        }
    }
}
