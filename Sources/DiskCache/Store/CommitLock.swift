import Support
#if canImport(Glibc)
import Glibc
#endif

/// Makes the renames that publish an entry (body, then metadata) one step
/// for every other writer and remover, in this process and in others
/// sharing the directory: a pthread mutex (an `flock` is per open file, so
/// threads sharing the descriptor would not exclude each other) and an
/// exclusive `flock` on the cache directory itself.
///
/// Readers never take it. It is held for a few system calls, never across
/// I/O of a body. If the lock cannot be had — locks unsupported (some
/// network filesystems), or a holder stopped for longer than
/// `CacheDefaults.commitLockTimeout` — the work goes ahead without it: the
/// write protocol still never lets a body and metadata that disagree become
/// a hit, the worst case is a miss. A process killed while holding it
/// releases it (the kernel drops `flock`s with the last descriptor).
final class CommitLock: Sendable {
    private let mutex = Locked()
    /// Owned by the `DiskCacheStore`, open for its whole life.
    private let directoryFD: Int32

    init(directoryFD: Int32) {
        self.directoryFD = directoryFD
    }

    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try mutex.withLock { () throws(E) -> T in
            let held = acquire()
            defer { if held { _ = flock(directoryFD, LOCK_UN) } }   // closing the store would drop it anyway
            return try body()
        }
    }

    private func acquire() -> Bool {
        guard directoryFD >= 0 else { return false }
        let deadline = monotonicSeconds() + CacheDefaults.commitLockTimeout
        var pause = CacheDefaults.commitLockFirstPause
        while true {
            if flock(directoryFD, LOCK_EX | LOCK_NB) == 0 { return true }
            if errno == EINTR { continue }
            guard errno == EWOULDBLOCK, monotonicSeconds() < deadline else { return false }
            usleep(pause)
            pause = min(pause * 2, CacheDefaults.commitLockLongestPause)
        }
    }
}
