// Small POSIX building blocks shared by the TestSupport helpers.
// Everything here is internal on purpose: test targets import both TestSupport
// and the module under test, so generic public names (Lock, Thread...) could clash.

import Glibc

/// A pthread mutex (TSan understands it, unlike Synchronization.Mutex).
final class TSMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// Monotonic clock in seconds.
func tsMonotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1_000_000_000
}

private final class TSThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// Starts a joinable pthread running `body`. Returns nil if the thread could not be created.
func tsSpawnThread(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
    let box = Unmanaged.passRetained(TSThreadBody(body)).toOpaque()
    var tid = pthread_t()
    let rc = pthread_create(&tid, nil, { raw in
        guard let raw else { return nil }
        let box = Unmanaged<TSThreadBody>.fromOpaque(raw).takeRetainedValue()
        box.body()
        return nil
    }, box)
    if rc != 0 {
        Unmanaged<TSThreadBody>.fromOpaque(box).release()
        return nil
    }
    return tid
}

/// close(2) callable from types that have their own `close()` method.
func tsClose(_ fd: Int32) {
    if fd >= 0 { _ = Glibc.close(fd) }
}

/// Marks a descriptor close-on-exec so spawned test processes do not inherit it.
func tsSetCloseOnExec(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFD)
    if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
}

// accept4/pipe2 are GNU extensions the Glibc module does not export; look them up at run time
// so new descriptors are close-on-exec atomically (a process spawned concurrently by another
// test thread must never inherit a server socket: it would keep connections open).
private typealias Accept4Fn = @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32
private typealias Pipe2Fn = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

private let tsAccept4: Accept4Fn? = {
    guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "accept4") else { return nil }
    return unsafeBitCast(sym, to: Accept4Fn.self)
}()

private let tsPipe2: Pipe2Fn? = {
    guard let sym = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2") else { return nil }
    return unsafeBitCast(sym, to: Pipe2Fn.self)
}()

/// accept(2) returning a close-on-exec descriptor (or -1 with errno set).
func tsAcceptCloexec(_ listenFD: Int32) -> Int32 {
    if let accept4 = tsAccept4 {
        return accept4(listenFD, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
    }
    let fd = accept(listenFD, nil, nil)
    if fd >= 0 { tsSetCloseOnExec(fd) }
    return fd
}

/// pipe(2) with both ends close-on-exec.
func tsPipeCloexec(_ fds: UnsafeMutablePointer<Int32>) -> Int32 {
    if let pipe2 = tsPipe2 {
        return pipe2(fds, Int32(O_CLOEXEC))
    }
    let rc = pipe(fds)
    if rc == 0 {
        tsSetCloseOnExec(fds[0])
        tsSetCloseOnExec(fds[1])
    }
    return rc
}

func tsJoinThread(_ thread: pthread_t) {
    _ = pthread_join(thread, nil)
}

/// Retry a syscall on EINTR.
@inline(__always)
func tsRetryEINTR<T: BinaryInteger>(_ body: () -> T) -> T {
    while true {
        let rc = body()
        if rc == -1 && errno == EINTR { continue }
        return rc
    }
}

/// A pipe whose read end becomes readable (forever) once `fire()` is called.
/// Used to wake up every poll()/sleep at once when a server stops.
final class TSWakePipe: @unchecked Sendable {
    let readFD: Int32
    let writeFD: Int32
    private let lock = TSMutex()
    private var fired = false
    private var closed = false

    init() throws {
        var fds: [Int32] = [-1, -1]
        let rc = fds.withUnsafeMutableBufferPointer { tsPipeCloexec($0.baseAddress!) }
        if rc != 0 { throw TestSupportError.posix("pipe", errno) }
        readFD = fds[0]
        writeFD = fds[1]
    }

    var isFired: Bool { lock.withLock { fired } }

    func fire() {
        lock.withLock {
            guard !fired, !closed else { return }
            fired = true
            var byte: UInt8 = 1
            _ = tsRetryEINTR { write(writeFD, &byte, 1) }
        }
    }

    /// Sleeps up to `seconds`; returns false if woken early because the pipe fired.
    func sleep(_ seconds: Double) -> Bool {
        if seconds <= 0 { return !isFired }
        let deadline = tsMonotonicNow() + seconds
        while true {
            let remaining = deadline - tsMonotonicNow()
            if remaining <= 0 { return !isFired }
            var pfd = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
            let ms = Int32(min(max((remaining * 1000).rounded(.up), 1), 1_000_000))
            let rc = poll(&pfd, 1, ms)
            if rc > 0 { return false }
            if rc < 0 && errno != EINTR { return !isFired }
        }
    }

    func close() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            tsClose(readFD)
            tsClose(writeFD)
        }
    }

    deinit { close() }
}

/// Errors thrown by TestSupport helpers.
public enum TestSupportError: Error, CustomStringConvertible, Sendable {
    case posix(String, Int32)
    case processTimedOut(executable: String, timeout: Double, stdout: String, stderr: String)
    case message(String)

    public var description: String {
        switch self {
        case let .posix(call, err):
            return "\(call) failed: \(String(cString: strerror(err))) (errno \(err))"
        case let .processTimedOut(executable, timeout, stdout, stderr):
            return "process \(executable) did not finish within \(timeout) s and was killed\n--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)"
        case let .message(text):
            return text
        }
    }
}
