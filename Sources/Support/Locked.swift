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
///
/// One heap object holds both the value and the mutex (`Storage`: the mutex
/// in its tail, at a fixed address): a `Locked` costs one allocation and one
/// free, not two (a cold URL makes a few, on one thread, and frees them on
/// another). Copies of a `Locked` share that object, as references to a class would.
///
/// `Sendable` only when `Value` is (as `NIOLockedValueBox`): `withLock` can
/// hand the value, or a part of it, to whichever thread calls it, so a
/// value that may not cross threads must not be reachable from several.
public struct Locked<Value> {
    @usableFromInline let storage: Storage

    /// The value as the header, the mutex as the one tail element.
    @usableFromInline final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        deinit {
            let rc = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
            // EBUSY only for one held for good (`acquireForever`), on a process's way to `_exit`.
            if rc != 0 && rc != EBUSY { threadingCallFailed("pthread_mutex_destroy", rc) }
        }
    }

    /// Inlinable: a caller in another module gets it specialised, so the
    /// `Storage` class of its value is looked up once (a cached accessor),
    /// not by a generic metadata search per `Locked` made (~600 instructions,
    /// two per cold URL).
    @inlinable
    public init(_ value: Value) {
        storage = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in value }, to: Storage.self)
        let rc = storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            return pthread_mutex_init(mutex, nil)
        }
        if rc != 0 { threadingCallFailed("pthread_mutex_init", rc) }
    }

    /// The box's identity: the same for every copy of this `Locked`.
    @inlinable
    public var id: ObjectIdentifier { ObjectIdentifier(storage) }

    /// Runs `body` with exclusive access to the value. No dynamic exclusivity
    /// check: the mutex is what makes access exclusive (a `swift_beginAccess`
    /// per `withLock`, ~20 per cold URL, had nothing to add). Inlinable: a
    /// caller in another module gets it specialised for its value, not the
    /// generic call it was (~15 per cold URL, ~45 instructions each).
    /// A lock or unlock that fails (a mutex never initialised, or given back
    /// by a thread that does not hold it) is a programming error: it stops
    /// the process with the call and the system's words (`threadingCallFailed`).
    @inlinable @inline(__always)
    public func withLock<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try storage.withUnsafeMutablePointers { (value, mutex) throws(E) -> T in
            let locked = pthread_mutex_lock(mutex)
            if locked != 0 { threadingCallFailed("pthread_mutex_lock", locked) }
            defer {
                let unlocked = pthread_mutex_unlock(mutex)
                if unlocked != 0 { threadingCallFailed("pthread_mutex_unlock", unlocked) }
            }
            return try body(&value.pointee)
        }
    }

    /// Takes the lock if it comes free within `seconds`, runs `last` with
    /// the value, and never gives the lock back; true when taken. Only for a
    /// process on its way to `_exit` (the reporter's second Ctrl-C), so that
    /// it never exits halfway through a line another thread is writing.
    /// (False only when the wait times out: any other failure is a programming error.)
    public func acquireForever(within seconds: Double, _ last: (inout Value) -> Void = { _ in }) -> Bool {
        var now = timespec()
        _ = clock_gettime(CLOCK_REALTIME, &now)   // fails only for a clock the system lacks (EINVAL)
        let nanos = Int(now.tv_nsec) + Int(seconds * 1e9)
        var deadline = timespec(tv_sec: now.tv_sec + nanos / 1_000_000_000, tv_nsec: nanos % 1_000_000_000)
        return storage.withUnsafeMutablePointers { value, mutex in
            let rc = pthread_mutex_timedlock(mutex, &deadline)
            if rc == ETIMEDOUT { return false }
            if rc != 0 { threadingCallFailed("pthread_mutex_timedlock", rc) }
            last(&value.pointee)
            return true
        }
    }

    /// `withLock(when:)`: waits on `condition` with the mutex, then runs `body`.
    func waitingWithLock<T>(_ condition: UnsafeMutablePointer<pthread_cond_t>, _ ready: (inout Value) -> Bool,
                            _ body: (inout Value) -> T) -> T {
        storage.withUnsafeMutablePointers { value, mutex in
            let locked = pthread_mutex_lock(mutex)
            if locked != 0 { threadingCallFailed("pthread_mutex_lock", locked) }
            defer {
                let unlocked = pthread_mutex_unlock(mutex)
                if unlocked != 0 { threadingCallFailed("pthread_mutex_unlock", unlocked) }
            }
            while !ready(&value.pointee) {
                let rc = pthread_cond_wait(condition, mutex)
                if rc != 0 { threadingCallFailed("pthread_cond_wait", rc) }
            }
            return body(&value.pointee)
        }
    }
}

extension Locked: @unchecked Sendable where Value: Sendable {}

extension Locked where Value == Void {
    public init() { self.init(()) }

    /// Runs `body` under the lock, for a critical section with no value of its own.
    @inlinable @inline(__always)
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        try withLock { (_: inout Void) throws(E) -> T in try body() }
    }
}

/// A pthread or semaphore call that failed where it can only fail through a
/// programming error (an object never initialised, or used by a thread that
/// does not own it): stops the process, naming the call and the system's
/// words for `code` (an errno value). Out of line, so that the checks inlined
/// into every `withLock` stay a compare and a branch.
@usableFromInline @inline(never)
func threadingCallFailed(_ call: StaticString, _ code: Int32) -> Never {
    fatalError("\(call) failed: \(String(cString: strerror(code))) (errno \(code))")
}
