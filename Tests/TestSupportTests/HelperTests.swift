import Foundation
import Glibc
import TestSupport
import Testing

@Suite("Process, TempDirectory and Paths helpers")
struct HelperTests {
    @Test func runProcessCapturesLargeOutputOnBothPipes() throws {
        let r = try runProcess("/bin/sh", ["-c", "head -c 3000000 /dev/zero; head -c 2000000 /dev/zero >&2; exit 3"])
        #expect(r.status == 3)
        #expect(r.signal == nil)
        #expect(r.stdoutBytes.count == 3_000_000)
        #expect(r.stderrBytes.count == 2_000_000)
    }

    @Test func runProcessFeedsStdinAndMergesEnvironment() throws {
        let input = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let cat = try runProcess("/bin/cat", [], stdin: input)
        #expect(cat.status == 0)
        #expect(sameBytes(cat.stdoutBytes, input))

        let env = try runProcess("/bin/sh", ["-c", "printf '%s|%s' \"$TS_FOO\" \"${PATH:+has-path}\""], environment: ["TS_FOO": "bar"])
        #expect(env.stdout == "bar|has-path")

        // A child that exits without reading its stdin must not kill us with SIGPIPE.
        let early = try runProcess("/bin/true", [], stdin: [UInt8](repeating: 1, count: 4_000_000))
        #expect(early.status == 0)
    }

    @Test func runProcessKillsOnTimeout() throws {
        let start = Date()
        #expect(throws: TestSupportError.self) {
            _ = try runProcess("/bin/sleep", ["10"], timeout: 0.3)
        }
        #expect(Date().timeIntervalSince(start) < 3)
    }

    @Test func startProcessDeliversSignals() throws {
        let sleeper = try startProcess("/bin/sleep", ["10"])
        #expect(sleeper.pid > 0)
        sleeper.sendSignal(SIGTERM)
        let r = sleeper.wait()
        #expect(r.signal == SIGTERM)
        #expect(r.status == 128 + SIGTERM)

        let trapper = try startProcess(
            "/bin/sh", ["-c", "trap 'echo caught; exit 7' INT; echo ready; while :; do sleep 0.02; done"], timeout: 10)
        #expect(trapper.waitForOutput("ready", timeout: 5))
        trapper.sendSignal(SIGINT)
        let t = trapper.wait()
        #expect(t.status == 7)
        #expect(t.stdout == "ready\ncaught\n")
    }

    /// `secondsFromSignalToExit` counts from the signal to the exit, however late `wait()` is
    /// called. Bounded by events the test sees, not by time windows: the child exits only once
    /// the test releases it (a file appears), so the figure is at least the time from the
    /// signal's return to the release; the figure is there before `wait()` and at most the time
    /// from just before the signal to the moment the test saw it; and it is the same after a
    /// `wait()` that came 1.5 s later.
    @Test func secondsFromSignalToExitCountsTheChildsTimeNotTheWaitersDelay() throws {
        let temp = try TempDirectory(prefix: "ts-signal-exit")
        let release = temp.file("release")
        let slow = try startProcess(
            "/bin/sh", ["-c", "trap 'while [ ! -e \(release) ]; do sleep 0.01; done; exit 130' INT; echo ready; while :; do sleep 0.02; done"],
            timeout: 60)
        #expect(slow.waitForOutput("ready", timeout: 30))
        #expect(slow.secondsFromSignalToExit == nil)
        let beforeSignal = Self.now()
        slow.sendSignal(SIGINT)
        let afterSignal = Self.now()
        usleep(600_000)
        let released = Self.now()
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        var seen: Double?
        let deadline = Self.now() + 30   // ends a hang only: the figure comes as soon as the child has exited
        while seen == nil && Self.now() < deadline {
            seen = slow.secondsFromSignalToExit
            if seen == nil { usleep(5_000) }
        }
        let noticed = Self.now()
        let seconds = try #require(seen, "no figure before wait(): the exit is noted by the waiter")
        #expect(seconds >= released - afterSignal && seconds <= noticed - beforeSignal,
                "\(seconds) s, not within \(released - afterSignal)...\(noticed - beforeSignal) s")
        usleep(1_500_000)
        #expect(slow.wait().status == 130)
        #expect(slow.secondsFromSignalToExit == seconds, "the figure changed when wait() came")
    }

    /// The monotonic clock `secondsFromSignalToExit` is counted on.
    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1_000_000_000
    }

    /// A child inherits neither the starting thread's signal mask (a Swift concurrency or
    /// Dispatch thread may block signals) nor a signal this process ignores (a library may ignore
    /// SIGPIPE; the asyncfetch executable does): it starts as from a shell. Both are set up here
    /// without touching what other tests run with: the mask is the starting thread's own (a
    /// thread made for it), and the ignored signal is SIGURG, whose default action is to be
    /// ignored anyway, so in this process SIG_IGN and SIG_DFL differ only in what an exec inherits.
    @Test func childrenStartWithNoBlockedSignalsAndEveryDispositionTheDefault() throws {
        let previous = signal(SIGURG, SIG_IGN)
        defer { _ = signal(SIGURG, previous) }
        let r = try onThread(blocking: [SIGPIPE, SIGUSR2, SIGINT]) {
            // grep itself, not through a shell: dash clears its signal mask as it starts.
            try runProcess("/bin/grep", ["-E", "^Sig(Blk|Ign)", "/proc/self/status"])
        }
        func mask(_ name: String) -> UInt64? {
            guard let line = r.stdout.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            return UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
        }
        #expect(mask("SigBlk") == 0, "\(r.stdout)")
        let ignored = try #require(mask("SigIgn"))
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGURG] {
            #expect(ignored & (UInt64(1) << UInt64(signal - 1)) == 0, "signal \(signal) ignored in child: \(r.stdout)")
        }
    }

    /// Runs `body` on a thread of its own that blocks `signals` (a mask no other thread shares).
    private func onThread<T: Sendable>(blocking signals: [Int32], _ body: @escaping @Sendable () throws -> T) throws -> T {
        let outcome = ThreadOutcome<T>(), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var set = sigset_t()
            sigemptyset(&set)
            signals.forEach { sigaddset(&set, $0) }
            let rc = pthread_sigmask(SIG_BLOCK, &set, nil)
            outcome.result = rc == 0 ? Result { try body() } : .failure(TestSupportError.message("pthread_sigmask: \(rc)"))
            done.signal()
        }
        done.wait()
        return try outcome.result!.get()
    }

    /// A descriptor this process opened without close-on-exec (as a library may) does not
    /// reach the child: it would hold a socket or the write end of a pipe open.
    @Test func childrenInheritNoDescriptorButTheirStandardStreams() throws {
        let leaky = open("/dev/null", O_RDONLY)
        try #require(leaky > 2)
        defer { close(leaky) }
        let r = try runProcess("/bin/sh", ["-c", "if [ -e /proc/self/fd/\(leaky) ]; then echo inherited; else echo closed; fi"])
        #expect(r.stdout == "closed\n")
    }

    @Test func runProcessStartsTheChildInTheGivenDirectory() throws {
        let dir = try TempDirectory(prefix: "ts-cwd")
        #expect(try runProcess("/bin/pwd", [], directory: dir.path).stdout == dir.path + "\n")
        #expect(throws: TestSupportError.self) { try runProcess("/bin/pwd", [], directory: dir.path + "/missing") }
        #expect(throws: TestSupportError.self) { try runProcess(dir.path + "/no-such-program", []) }
    }

    @Test func tempDirectoryIsCreatedAndRemoved() throws {
        let dir = try TempDirectory(prefix: "ts-selftest")
        #expect(dir.path.hasPrefix("/tmp/ts-selftest."))
        var isDir: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: dir.path, isDirectory: &isDir) && isDir.boolValue)
        let file = try dir.write("a/b/c.txt", Array("x".utf8))
        #expect(FileManager.default.fileExists(atPath: file))
        _ = chmod(dir.path + "/a/b", 0o500)  // read-only subfolder must not block removal
        dir.remove()
        dir.remove()
        #expect(!FileManager.default.fileExists(atPath: dir.path))

        var path = ""
        do {
            let scoped = try TempDirectory()
            path = scoped.path
        }
        #expect(!path.isEmpty && !FileManager.default.fileExists(atPath: path))  // removed on deinit
    }

    @Test func pathsPointIntoThePackage() {
        let root = Paths.packageRoot
        #expect(FileManager.default.fileExists(atPath: root + "/Package.swift"))
        #expect(Paths.fixtures == root + "/Fixtures")
        let products = Paths.buildProductsDirectory
        var isDir: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: products, isDirectory: &isDir) && isDir.boolValue)
        #expect(Paths.builtProduct("asyncfetch").hasSuffix("/asyncfetch"))
    }
}

/// What a thread's body gave: written by the thread before it signals, read after the wait.
private final class ThreadOutcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
