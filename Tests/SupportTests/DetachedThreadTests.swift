#if canImport(Glibc)
import Glibc
#endif
import Support
import Testing

/// A detached thread carries its own name, as `top -H` and the kernel's
/// segfault lines show it, not the name of the thread that started it
/// (the cooperative pool's "com.apple.root.default-qos").
@Suite struct DetachedThreadTests {
    /// The calling thread's name as the kernel keeps it.
    private static func currentName() -> String? {
        let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        return String(decoding: bytes[0..<n], as: UTF8.self).trimmingSuffix("\n")
    }

    /// The names the threads started with `names` report from inside.
    private static func namesSeen(_ names: [String]) throws -> [String?] {
        let seen = Locked<[String: String?]>([:])
        for name in names {
            try startDetachedThread(name: name) { seen.withLock { $0[name] = .some(currentName()) } }
        }
        let deadline = monotonicSeconds() + 10
        while seen.withLock({ $0.count }) < names.count && monotonicSeconds() < deadline { usleep(1000) }
        return seen.withLock { seen in names.map { seen[$0] ?? nil } }
    }

    @Test func aThreadIsNamedAsStartedNotAfterItsStarter() throws {
        let starter = try #require(Self.currentName())
        let names = try Self.namesSeen(["input-reader", "signal-watcher"])
        #expect(names == ["input-reader", "signal-watcher"])
        #expect(!names.contains(starter))
    }

    @Test func aLongNameKeepsItsFirst15Bytes() throws {
        #expect(try Self.namesSeen(["a-name-longer-than-the-kernel-keeps"]) == ["a-name-longer-t"])
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
