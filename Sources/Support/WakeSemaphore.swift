#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Wakes one thread that sleeps for want of work: a POSIX semaphore
/// (`sem_t`), for a thread that notes in a `Locked` value that it is about
/// to sleep, gives the lock back, then `wait`s; whoever finds that note
/// under the lock clears it and, after giving the lock back, `post`s once.
/// A post that comes before the wait makes the wait return at once.
///
/// Cheaper than a `LockCondition` for a hand-off per round: glibc's
/// `pthread_cond_wait` takes its mutex back marked contended, so every
/// wake-up costs the woken thread one more system call (a futex wake for
/// nobody) when it gives the lock back; a semaphore's `post` and `wait`
/// make one only when the other side sleeps.
public final class WakeSemaphore: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    public init() {
        semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        let rc = sem_init(semaphore, 0, 0)
        precondition(rc == 0, "sem_init failed: \(errno)")
    }

    deinit {
        _ = sem_destroy(semaphore)   // fails only for an invalid semaphore
        semaphore.deallocate()
    }

    /// Wakes the thread in `wait`, or lets its next `wait` return at once.
    public func post() {
        _ = sem_post(semaphore)   // fails only past SEM_VALUE_MAX: one post per noted sleep
    }

    /// Sleeps until a `post` (returns at once if one came already).
    public func wait() {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
    }
}
