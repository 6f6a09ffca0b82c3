#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts `body` on a new detached POSIX thread named `name` (its first 15
/// bytes: what `top -H`, `perf` and the kernel's segfault lines show).
/// (Foundation's `Thread` would link Foundation into the executable, which
/// costs start-up time on every run, cache hits included.)
///
/// The name matters for crash reports: a thread started from the
/// cooperative pool otherwise inherits its name, "com.apple.root.default-qos",
/// and a segfault line cannot tell it from the pool's own threads.
///
/// Lifetime: the closure is retained in a box passed to the thread, which
/// releases it when `body` returns.
public func startDetachedThread(name: String, _ body: @escaping @Sendable () -> Void) throws(ThreadStartError) {
    final class Box: @unchecked Sendable {
        let body: @Sendable () -> Void
        let name: String
        init(_ body: @escaping @Sendable () -> Void, name: String) { self.body = body; self.name = name }
    }
    func refusal(_ rc: Int32) -> ThreadStartError {
        ThreadStartError(description: "cannot start the \(name) thread: \(String(cString: strerror(rc)))")
    }
    var attributes = pthread_attr_t()
    let initialised = pthread_attr_init(&attributes)
    guard initialised == 0 else { throw refusal(initialised) }
    defer { _ = pthread_attr_destroy(&attributes) }   // fails only for attributes never initialised
    let detached = pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    guard detached == 0 else { throw refusal(detached) }
    // Retained for the thread, which takes the reference back (`takeRetainedValue`) as it starts;
    // released here instead when no thread starts.
    let box = Unmanaged.passRetained(Box(body, name: name)).toOpaque()
    var thread = pthread_t()
    let rc = pthread_create(&thread, &attributes, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        nameCurrentThread(box.name)
        box.body()
        return nil
    }, box)
    if rc != 0 {
        Unmanaged<Box>.fromOpaque(box).release()
        throw refusal(rc)
    }
}

/// Names the calling thread (the kernel keeps the first 15 bytes). Through
/// /proc: `pthread_setname_np` is not visible to Swift's Glibc module. A
/// name is only a help to whoever watches: failures are ignored.
public func nameCurrentThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    var name = name
    _ = name.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    _ = close(fd)
}

/// The system refused a new thread (`pthread_create`'s error, in words).
public struct ThreadStartError: Error, CustomStringConvertible {
    public let description: String
}
