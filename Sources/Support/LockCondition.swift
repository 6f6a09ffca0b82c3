#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A condition variable for a `Locked` value: a thread waits in
/// `withLock(when:…)` until the value is ready; whoever changes it calls
/// `signal()` (inside `withLock`, so the wake-up cannot be missed; or right
/// after it, when the waiter notes under the lock that it waits and the
/// signaller saw that note there: then the woken thread does not block at
/// once on the lock still held).
public final class LockCondition: @unchecked Sendable {
    fileprivate let condition: UnsafeMutablePointer<pthread_cond_t>

    /// The condition lives at a fixed address (it must not move).
    public init() {
        condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let rc = pthread_cond_init(condition, nil)
        if rc != 0 { threadingCallFailed("pthread_cond_init", rc) }
    }

    deinit {
        let rc = pthread_cond_destroy(condition)
        // EBUSY only for a condition a thread still waits on, on a process's way to `_exit` (`acquireForever`).
        if rc != 0 && rc != EBUSY { threadingCallFailed("pthread_cond_destroy", rc) }
        condition.deinitialize(count: 1)
        condition.deallocate()
    }

    /// Wakes one thread waiting on this condition.
    public func signal() {
        let rc = pthread_cond_signal(condition)
        if rc != 0 { threadingCallFailed("pthread_cond_signal", rc) }
    }
}

extension Locked {
    /// Takes the lock, waits on `condition` (the lock released meanwhile)
    /// until `ready` returns true, then runs `body`, all without giving the
    /// value up in between. `ready` may note that a thread waits.
    public func withLock<T>(when condition: LockCondition, _ ready: (inout Value) -> Bool,
                            _ body: (inout Value) -> T) -> T {
        waitingWithLock(condition.condition, ready, body)
    }
}
