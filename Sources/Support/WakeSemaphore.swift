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
        if sem_init(semaphore, 0, 0) != 0 { threadingCallFailed("sem_init", errno) }
    }

    /// Each call below fails only through a programming error (a semaphore
    /// never made, or posted past SEM_VALUE_MAX when there is one post per
    /// noted sleep): that stops the process, naming the call (`threadingCallFailed`).
    deinit {
        if sem_destroy(semaphore) != 0 { threadingCallFailed("sem_destroy", errno) }
        semaphore.deallocate()
    }

    /// Wakes the thread in `wait`, or lets its next `wait` return at once.
    public func post() {
        if sem_post(semaphore) != 0 { threadingCallFailed("sem_post", errno) }
    }

    /// Sleeps until a `post` (returns at once if one came already).
    public func wait() {
        while sem_wait(semaphore) != 0 {
            let code = errno
            if code != EINTR { threadingCallFailed("sem_wait", code) }
        }
    }
}
