import Dispatch
import Glibc
import Synchronization
import Testing
import TestSupport

/// Starting children while this process holds many descriptors, from several threads at once:
/// what `swift test --parallel` does. Foundation's `Process.run()` (Swift 6.3.1) read past
/// glibc's `readdir` buffer while it listed /proc/self/fd and died of SIGSEGV: the same
/// 1,500 descriptors and 4 threads crashed 9 runs in 10 within 10 s (bench/history/tests.md).
@Suite struct ManyDescriptorsTests {
    @Test func childrenStartWhileManyDescriptorsAreOpenOnFourThreads() throws {
        let descriptors = 1_500, threads = 4, childrenPerThread = 400
        var limit = rlimit()
        try #require(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
        if limit.rlim_cur < rlim_t(descriptors + 500) && limit.rlim_max >= rlim_t(descriptors + 500) {
            limit.rlim_cur = rlim_t(descriptors + 500)
            try #require(setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
        }
        try #require(limit.rlim_cur >= rlim_t(descriptors + 500), "RLIMIT_NOFILE \(limit.rlim_cur)")
        var open: [Int32] = []
        defer { open.forEach { close($0) } }
        for _ in 0..<descriptors {
            let fd = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
            try #require(fd >= 0)
            open.append(fd)
        }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<childrenPerThread {
                do {
                    let result = try runProcess("/bin/true", [])
                    if result.status != 0 { failures.withLock { $0.append("status \(result.status)") } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        let seen = failures.withLock { $0 }
        #expect(seen.isEmpty, "\(seen.count) failed: \(seen.prefix(5))")
    }
}
