import Foundation
import Glibc

/// Outcome of a child process.
public struct ProcessResult: Sendable {
    /// Exit status; when the process was killed by a signal: 128 + signal number (shell convention).
    public let status: Int32
    /// The signal that terminated the process, or nil if it exited normally.
    public let signal: Int32?
    /// True when the process was killed because it exceeded its timeout.
    public let timedOut: Bool
    /// stdout decoded as UTF-8 (invalid sequences replaced). Decoded on each access: cheap for
    /// text, but repairing large binary output is slow, so use `stdoutBytes` for binary data.
    public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    /// stderr decoded as UTF-8 (invalid sequences replaced), decoded on each access.
    public var stderr: String { String(decoding: stderrBytes, as: UTF8.self) }
    /// stdout as raw bytes.
    public let stdoutBytes: [UInt8]
    /// stderr as raw bytes.
    public let stderrBytes: [UInt8]

    public init(status: Int32, signal: Int32? = nil, timedOut: Bool = false, stdoutBytes: [UInt8], stderrBytes: [UInt8]) {
        self.status = status
        self.signal = signal
        self.timedOut = timedOut
        self.stdoutBytes = stdoutBytes
        self.stderrBytes = stderrBytes
    }
}

/// Runs `executable` with `arguments` and waits for it.
/// - environment: nil inherits the current environment; otherwise these variables are merged
///   over the current environment.
/// - stdin: bytes written to the child's standard input (then closed); nil = /dev/null.
/// - timeout: seconds; on expiry the child is killed (SIGKILL) and `TestSupportError.processTimedOut`
///   is thrown (it carries the partial output).
/// Both output pipes are drained concurrently, so large outputs cannot deadlock.
public func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    stdin: [UInt8]? = nil, timeout: Double = 60
) throws -> ProcessResult {
    let child = try startProcess(executable, arguments, environment: environment, stdin: stdin, timeout: timeout)
    let result = child.wait()
    if result.timedOut {
        throw TestSupportError.processTimedOut(
            executable: executable, timeout: timeout, stdout: result.stdout, stderr: result.stderr)
    }
    return result
}

/// Starts `executable` without waiting (for signal tests). Same parameters as `runProcess`;
/// `timeout` is the default for `wait()`, counted from the start of the process.
public func startProcess(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    stdin: [UInt8]? = nil, timeout: Double = 60
) throws -> SpawnedProcess {
    try SpawnedProcess(executable: executable, arguments: arguments, environment: environment, stdin: stdin, timeout: timeout)
}

/// Accumulates bytes read from a pipe.
final class OutputCollector: @unchecked Sendable {
    private let lock = TSMutex()
    private var bytes: [UInt8] = []
    private var abandoned = false
    private var finished = false

    func append(_ chunk: ArraySlice<UInt8>) { lock.withLock { bytes.append(contentsOf: chunk) } }
    var snapshot: [UInt8] { lock.withLock { bytes } }
    var isAbandoned: Bool { lock.withLock { abandoned } }
    func abandon() { lock.withLock { abandoned = true } }
    var isFinished: Bool { lock.withLock { finished } }

    /// Reads `fd` until EOF (or until abandoned, e.g. when a grandchild keeps the pipe open).
    func drain(_ fd: Int32) {
        defer { lock.withLock { finished = true } }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let rc = poll(&pfd, 1, 100)
            if rc < 0 {
                if errno == EINTR { continue }
                return
            }
            if rc == 0 {
                if isAbandoned { return }
                continue
            }
            let n = chunk.withUnsafeMutableBytes { raw in
                tsRetryEINTR { read(fd, raw.baseAddress, raw.count) }
            }
            if n <= 0 { return }
            append(chunk[0..<n])
        }
    }
}

/// When a child was last signalled and when its exit was seen (`tsMonotonicNow`).
final class Moments: @unchecked Sendable {
    private let lock = TSMutex()
    private var signalled: Double?
    private var exited: Double?

    func noteSignal() { lock.withLock { signalled = tsMonotonicNow() } }

    /// Blocks until `pid` has exited (without reaping it: Foundation does) and notes when.
    func awaitExit(of pid: Int32) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        lock.withLock { exited = tsMonotonicNow() }
    }
    var fromSignalToExit: Double? {
        lock.withLock { signalled.flatMap { sent in exited.map { $0 - sent } } }
    }
}

/// A running child process started by `startProcess`.
public final class SpawnedProcess: @unchecked Sendable {
    /// Process id of the child.
    public let pid: Int32
    public let executable: String
    private let process: Process
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let stdinPipe: Pipe?
    private let stdoutCollector = OutputCollector()
    private let stderrCollector = OutputCollector()
    private let exited = DispatchSemaphore(value: 0)
    private let defaultTimeout: Double
    private let startTime: Double
    private let lock = TSMutex()
    private let waitLock = TSMutex()
    private var threads: [pthread_t] = []
    private var finalResult: ProcessResult?
    private let moments = Moments()

    init(executable: String, arguments: [String], environment: [String: String]?, stdin: [UInt8]?, timeout: Double) throws {
        self.executable = executable
        self.defaultTimeout = timeout
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            var merged = ProcessInfo.processInfo.environment
            merged.merge(environment) { _, new in new }
            process.environment = merged
        }
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        if stdin != nil {
            let pipe = Pipe()
            stdinPipe = pipe
            process.standardInput = pipe
        } else {
            stdinPipe = nil
            process.standardInput = FileHandle.nullDevice
        }
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        // Pipe() does not mark its descriptors close-on-exec: do it right away so processes
        // spawned concurrently by other tests do not inherit them (which would delay EOF).
        for handle in [stdoutPipe.fileHandleForReading, stdoutPipe.fileHandleForWriting,
                       stderrPipe.fileHandleForReading, stderrPipe.fileHandleForWriting]
        {
            tsSetCloseOnExec(handle.fileDescriptor)
        }
        if let stdinPipe {
            tsSetCloseOnExec(stdinPipe.fileHandleForReading.fileDescriptor)
            tsSetCloseOnExec(stdinPipe.fileHandleForWriting.fileDescriptor)
        }
        startTime = tsMonotonicNow()
        // Swift concurrency / Dispatch worker threads block most signals (SIGINT, SIGTERM...);
        // a child started with that mask would not see the signals tests send it. Foundation's
        // Process (swift 6.3) already starts the child with an empty mask: a child of a thread
        // that blocks SIGINT and SIGTERM shows `SigBlk: 0` in /proc/self/status (what it does
        // not reset is a disposition: a signal the parent ignores stays ignored in the child).
        // The mask is emptied around `run()` all the same, for a Foundation that leaves it (as
        // corelibs versions that set only POSIX_SPAWN_SETPGROUP did), and ours restored after.
        var empty = sigset_t()
        var saved = sigset_t()
        sigemptyset(&empty)
        pthread_sigmask(SIG_SETMASK, &empty, &saved)
        do {
            try process.run()
            pthread_sigmask(SIG_SETMASK, &saved, nil)
        } catch {
            pthread_sigmask(SIG_SETMASK, &saved, nil)
            throw error
        }
        pid = process.processIdentifier
        // Make sure the parent does not keep the child's ends open (no EOF otherwise).
        try? stdoutPipe.fileHandleForWriting.close()
        try? stderrPipe.fileHandleForWriting.close()
        try? stdinPipe?.fileHandleForReading.close()

        let outFD = stdoutPipe.fileHandleForReading.fileDescriptor
        let errFD = stderrPipe.fileHandleForReading.fileDescriptor
        let outCollector = stdoutCollector
        let errCollector = stderrCollector
        var started: [pthread_t] = []
        let moments = self.moments, child = pid
        if let t = tsSpawnThread({ moments.awaitExit(of: child) }) { started.append(t) }
        if let t = tsSpawnThread({ outCollector.drain(outFD) }) { started.append(t) }
        if let t = tsSpawnThread({ errCollector.drain(errFD) }) { started.append(t) }
        if let stdin, let pipe = stdinPipe {
            let writer = pipe.fileHandleForWriting
            if let t = tsSpawnThread({
                SpawnedProcess.feed(writer.fileDescriptor, stdin)
                try? writer.close()  // EOF for the child
            }) {
                started.append(t)
            } else {
                try? writer.close()
            }
        }
        threads = started
    }

    deinit {
        if lock.withLock({ finalResult == nil }) {
            _ = kill(pid, SIGKILL)
            _ = wait(timeout: 10)
        }
    }

    /// Writes `bytes` to `fd` with SIGPIPE blocked in this thread (child may exit early).
    private static func feed(_ fd: Int32, _ bytes: [UInt8]) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        var sawEPIPE = false
        bytes.withUnsafeBytes { raw in
            guard var p = raw.baseAddress else { return }
            var remaining = raw.count
            while remaining > 0 {
                let n = write(fd, p, remaining)
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno == EPIPE { sawEPIPE = true }
                    return
                }
                p += n
                remaining -= n
            }
        }
        if sawEPIPE {
            // Consume the pending thread-directed SIGPIPE so it is never delivered.
            var zero = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&set, nil, &zero)
        }
    }

    /// Sends `signal` (e.g. SIGINT, SIGTERM) to the child.
    public func sendSignal(_ signal: Int32) {
        if lock.withLock({ finalResult == nil }) {
            moments.noteSignal()
            _ = kill(pid, signal)
        }
    }

    /// Seconds from the last `sendSignal` to the child's exit, both noted where they
    /// happen (the exit by a thread that waits for nothing else, not by whoever awaits
    /// `wait()`, which a busy test process may resume late); nil before both.
    public var secondsFromSignalToExit: Double? { moments.fromSignalToExit }

    /// Whether the child is still running.
    public var isRunning: Bool { process.isRunning }

    /// Output captured so far (while the process runs).
    public var stdoutSoFar: String { String(decoding: stdoutCollector.snapshot, as: UTF8.self) }
    public var stderrSoFar: String { String(decoding: stderrCollector.snapshot, as: UTF8.self) }

    /// Waits until stdout (or stderr) contains `text`. Returns false on timeout or when the
    /// process exited without printing it.
    @discardableResult
    public func waitForOutput(_ text: String, inStderr: Bool = false, timeout: Double = 10) -> Bool {
        let deadline = tsMonotonicNow() + timeout
        let collector = inStderr ? stderrCollector : stdoutCollector
        while true {
            if String(decoding: collector.snapshot, as: UTF8.self).contains(text) { return true }
            if !process.isRunning {
                // One more look: the last output may have landed after the check.
                usleep(20_000)
                return String(decoding: collector.snapshot, as: UTF8.self).contains(text)
            }
            if tsMonotonicNow() >= deadline { return false }
            usleep(5_000)
        }
    }

    /// Waits for the child to exit (killing it with SIGKILL once the timeout given to
    /// `startProcess` has elapsed since it started; `timedOut` is then true).
    public func wait() -> ProcessResult {
        wait(timeout: max(0, startTime + defaultTimeout - tsMonotonicNow()))
    }

    /// Waits at most `timeout` seconds from now, then kills the child (SIGKILL).
    public func wait(timeout: Double) -> ProcessResult {
        waitLock.withLock { waitLocked(timeout: timeout) }
    }

    private func waitLocked(timeout: Double) -> ProcessResult {
        if let done = lock.withLock({ finalResult }) { return done }
        var timedOut = false
        if exited.wait(timeout: .now() + max(0, timeout)) == .timedOut {
            timedOut = true
            _ = kill(pid, SIGKILL)
            exited.wait()
        }
        // The child has exited (isRunning is already false): this returns at once, and it
        // releases Foundation's run-loop source, which otherwise keeps the Process alive forever.
        process.waitUntilExit()
        // The pipes reach EOF once the child is gone, unless a grandchild still holds them.
        let toJoin: [pthread_t] = lock.withLock {
            let t = threads
            threads = []
            return t
        }
        let deadline = tsMonotonicNow() + 2
        let collectors = [stdoutCollector, stderrCollector]
        while !collectors.allSatisfy(\.isFinished) && tsMonotonicNow() < deadline {
            usleep(1_000)
        }
        for c in collectors { c.abandon() }
        for t in toJoin { tsJoinThread(t) }

        var status = process.terminationStatus
        var signal: Int32?
        if process.terminationReason == .uncaughtSignal {
            signal = status
            status = 128 + status
        }
        let result = ProcessResult(
            status: status, signal: signal, timedOut: timedOut,
            stdoutBytes: stdoutCollector.snapshot, stderrBytes: stderrCollector.snapshot)
        lock.withLock { finalResult = result }
        return result
    }
}
