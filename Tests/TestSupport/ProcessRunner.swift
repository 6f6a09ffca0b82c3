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
/// - directory: the child's working directory; nil = this process's.
/// - timeout: seconds; on expiry the child is killed (SIGKILL) and `TestSupportError.processTimedOut`
///   is thrown (it carries the partial output).
/// Both output pipes are drained concurrently, so large outputs cannot deadlock. The child is
/// started with `posix_spawn` (`ChildProcess`, which says how and why not Foundation's `Process`).
public func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    stdin: [UInt8]? = nil, directory: String? = nil, timeout: Double = 60
) throws -> ProcessResult {
    let child = try startProcess(executable, arguments, environment: environment, stdin: stdin, directory: directory,
                                 timeout: timeout)
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
    stdin: [UInt8]? = nil, directory: String? = nil, timeout: Double = 60
) throws -> SpawnedProcess {
    try SpawnedProcess(executable: executable, arguments: arguments, environment: environment, stdin: stdin,
                       directory: directory, timeout: timeout)
}

/// A running child process started by `startProcess`.
public final class SpawnedProcess: @unchecked Sendable {
    /// Process id of the child.
    public let pid: Int32
    public let executable: String
    private let child: ChildProcess
    private let output: ChildOutput
    private let defaultTimeout: Double
    private let startTime: Double
    /// One `wait` at a time; the first one's result is every later one's.
    private let waitLock = TSMutex()
    private let result = TSLocked<ProcessResult?>(nil)

    init(executable: String, arguments: [String], environment: [String: String]?, stdin: [UInt8]?,
         directory: String? = nil, timeout: Double, blockedSignals: [Int32] = []) throws {
        self.executable = executable
        defaultTimeout = timeout
        startTime = tsMonotonicNow()
        child = try ChildProcess(executable, arguments, environment: environment, stdin: stdin == nil ? .null : .pipe,
                                 stdout: .pipe, stderr: .pipe, directory: directory, blockedSignals: blockedSignals)
        pid = child.pid
        output = try ChildOutput(stdinFD: child.stdinFD, input: stdin ?? [], stdoutFD: child.stdoutFD, stderrFD: child.stderrFD)
    }

    deinit {
        if result.withLock({ $0 == nil }) {
            sendSignal(SIGKILL)
            _ = wait(timeout: 10)
        }
    }

    /// Sends `signal` (e.g. SIGINT, SIGTERM) to the child, unless it has been reaped. `kill`
    /// cannot fail for a child not yet reaped but with a bad signal number; that is written to stderr.
    public func sendSignal(_ signal: Int32) {
        reportFailure { try child.signal(signal) }
    }

    /// Seconds from the last `sendSignal` to the child's exit, both noted where they
    /// happen (the exit by a thread that waits for nothing else, not by whoever awaits
    /// `wait()`, which a busy test process may resume late); nil before both.
    public var secondsFromSignalToExit: Double? { child.secondsFromSignalToExit }

    /// Whether the child is still running.
    public var isRunning: Bool { child.isRunning }

    /// Output captured so far (while the process runs).
    public var stdoutSoFar: String { String(decoding: output.stdout, as: UTF8.self) }
    public var stderrSoFar: String { String(decoding: output.stderr, as: UTF8.self) }

    /// Waits until stdout (or stderr) contains `text`. Returns false on timeout or when the
    /// process exited without printing it.
    @discardableResult
    public func waitForOutput(_ text: String, inStderr: Bool = false, timeout: Double = 10) -> Bool {
        let deadline = tsMonotonicNow() + timeout
        func printed() -> Bool { String(decoding: inStderr ? output.stderr : output.stdout, as: UTF8.self).contains(text) }
        while true {
            if printed() { return true }
            if !isRunning {
                // One more look: the last output may have landed after the check.
                usleep(20_000)
                return printed()
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
        waitLock.withLock {
            if let done = result.withLock({ $0 }) { return done }
            var timedOut = false
            var termination = child.waitForExit(timeout: timeout)
            if termination == nil {
                timedOut = true
                sendSignal(SIGKILL)
                termination = child.waitForExit()
            }
            // The pipes reach EOF once the child is gone, unless a grandchild still holds them.
            if let failure = output.finish(grace: 2) {
                tsWarn("\(executable) (pid \(pid)): \(failure)")
            }
            var status: Int32, signal: Int32?
            switch termination ?? .unknown(0) {
            case let .exited(code): status = code
            case let .signalled(number): (status, signal) = (128 + number, number)
            case let .unknown(error):
                tsWarn("the exit status of \(executable) (pid \(pid)) is lost: \(String(cString: strerror(error)))")
                status = -1
            }
            let done = ProcessResult(status: status, signal: signal, timedOut: timedOut,
                                     stdoutBytes: output.stdout, stderrBytes: output.stderr)
            result.withLock { $0 = done }
            return done
        }
    }
}
