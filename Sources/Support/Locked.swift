#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value and the pthread mutex that guards it: the value can only be read
/// or changed inside `withLock`, so forgetting the lock does not compile
/// (the shape of swift-nio's `NIOLockedValueBox`).
///
/// A pthread mutex rather than `Synchronization.Mutex`: Thread Sanitizer
/// reports false races inside the latter on this toolchain (FACTS.md).
public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed: \(rc)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    @inline(__always)
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Takes the lock if it comes free within `seconds` and never gives it
    /// back; true when taken. Only for a process on its way to `_exit` (the
    /// reporter's second Ctrl-C), so that it never exits halfway through a
    /// line another thread is writing.
    public func acquireForever(within seconds: Double) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nanos = Int(now.tv_nsec) + Int(seconds * 1e9)
        var deadline = timespec(tv_sec: now.tv_sec + nanos / 1_000_000_000, tv_nsec: nanos % 1_000_000_000)
        return pthread_mutex_timedlock(mutex, &deadline) == 0
    }
}

extension Locked where Value == Void {
    public convenience init() { self.init(()) }

    /// Runs `body` under the lock, for a critical section with no value of its own.
    @inline(__always)
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try withLock { (_: inout Void) throws(E) -> T in try body() }
    }
}
