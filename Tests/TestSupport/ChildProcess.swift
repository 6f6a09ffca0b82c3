import Dispatch
import Glibc

/// A child process started with `posix_spawn(3)`, signalled and reaped by its pid.
///
/// Not Foundation's `Process`: swift-corelibs-foundation (Swift 6.3.1) copies 256 bytes from
/// each `/proc/self/fd` entry while it looks for the highest open descriptor, and once many
/// descriptors are open the copy can run past the end of glibc's `readdir` buffer: the test
/// process died of SIGSEGV inside `Process.run()` (fixed upstream by swift-corelibs-foundation
/// PR #5472, after 6.3.1). Here glibc closes the child's inherited descriptors itself
/// (`posix_spawn_file_actions_addclosefrom_np`, one `close_range(2)` in the child).
///
/// The child starts
/// - with only `blockedSignals` blocked (none by default: a Swift concurrency or Dispatch thread
///   blocks SIGINT and SIGTERM, and a child would inherit that mask) and every signal at its
///   default disposition (an ignored signal stays ignored across exec: were this process to
///   ignore one, as the asyncfetch executable ignores SIGPIPE, a shell's child still would not);
/// - in this process's process group, so an interrupted `swift test` takes its children with it;
/// - with /dev/null or a pipe on each standard stream and no other descriptor open.
///
/// One thread per child waits for its exit (`waitid` with `WNOWAIT`: the child stays a zombie)
/// and notes when, then reaps it under the lock `signal(_:)` takes: no signal goes to the pid
/// after the reap, when it may already name another process.
final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's standard streams goes.
    enum Stream: Sendable { case null, pipe }

    /// How the child ended.
    enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
        /// `waitid` or `waitpid` failed with this errno: the status is lost.
        case unknown(Int32)

        init(waitStatus status: Int32) {
            let signal = status & 0x7f
            self = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
        }
    }

    /// What the lock guards: the outcome, and when the last signal went out and the exit was seen
    /// (`tsMonotonicNow`), both noted where they happen.
    private struct Life {
        var termination: Termination?
        var signalledAt: Double?
        var exitedAt: Double?
    }

    let pid: pid_t
    let executable: String
    /// This process's ends of the child's pipes (close-on-exec), -1 for a stream on /dev/null:
    /// write to `stdinFD`, read `stdoutFD` and `stderrFD`. The caller owns and closes them.
    let stdinFD: Int32
    let stdoutFD: Int32
    let stderrFD: Int32
    private let life: TSLocked<Life>
    /// Signalled once the child is reaped, and again by each waiter that takes it (a latch).
    private let reaped: DispatchSemaphore
    private let reaper: pthread_t

    /// Starts `executable` (an absolute path; argv[0] is that path) with `arguments`.
    /// - environment: merged over this process's environment (nil: inherited as it is).
    /// - directory: the child's working directory (nil: this process's).
    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
         stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .null,
         directory: String? = nil, blockedSignals: [Int32] = []) throws {
        let spawned = try Self.spawn(executable, arguments, environment: environment, streams: (stdin, stdout, stderr),
                                     directory: directory, blockedSignals: blockedSignals)
        let pid = spawned.pid, life = TSLocked(Life()), reaped = DispatchSemaphore(value: 0)
        guard let thread = tsSpawnThread({ Self.awaitExit(of: pid, life, reaped) }) else {
            _ = kill(pid, SIGKILL)
            var status: Int32 = 0
            _ = tsRetryEINTR { waitpid(pid, &status, 0) }
            [spawned.stdin, spawned.stdout, spawned.stderr].forEach(tsClose)
            throw TestSupportError.message("pthread_create failed: no thread to wait for \(executable) (pid \(pid)), killed")
        }
        self.executable = executable
        self.pid = pid
        stdinFD = spawned.stdin
        stdoutFD = spawned.stdout
        stderrFD = spawned.stderr
        self.life = life
        self.reaped = reaped
        reaper = thread
    }

    deinit {
        if life.withLock({ $0.termination == nil }) { reportFailure { try signal(SIGKILL) } }
        reaped.wait()
        tsJoinThread(reaper)
    }

    /// Sends `signal` to the child, unless it has been reaped (then its pid may be another process's).
    func signal(_ signal: Int32) throws {
        try life.withLock { life in
            guard life.termination == nil else { return }
            life.signalledAt = tsMonotonicNow()
            guard kill(pid, signal) == 0 else {
                throw TestSupportError.posix("kill(\(pid) \(executable), signal \(signal))", errno)
            }
        }
    }

    /// Whether the child has not exited yet (a zombie not yet reaped has exited).
    var isRunning: Bool {
        if life.withLock({ $0.termination != nil }) { return false }
        var info = siginfo_t()
        // WNOHANG leaves the pid field 0 while the child runs; WNOWAIT leaves the reap to the reaper.
        guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else {
            return life.withLock { $0.termination == nil }   // ECHILD: reaped in between
        }
        return info._sifields._sigchld.si_pid == 0
    }

    /// Waits for the child's end; nil when `timeout` seconds (nil: no limit) pass first.
    func waitForExit(timeout: Double? = nil) -> Termination? {
        if let timeout {
            guard reaped.wait(timeout: .now() + max(0, timeout)) == .success else { return nil }
        } else {
            reaped.wait()
        }
        reaped.signal()
        return life.withLock { $0.termination }
    }

    /// Sends `signal`, waits up to `grace` seconds, then SIGKILL and waits for the end.
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM, grace: Double = 10) -> Termination {
        reportFailure { try self.signal(signal) }
        if let done = waitForExit(timeout: grace) { return done }
        reportFailure { try self.signal(SIGKILL) }
        return waitForExit() ?? .unknown(0)
    }

    /// Seconds from the last `signal(_:)` to the exit; nil before both.
    var secondsFromSignalToExit: Double? {
        life.withLock { life in life.signalledAt.flatMap { sent in life.exitedAt.map { $0 - sent } } }
    }

    /// The reaper's body: blocks until the child has exited, notes when, then reaps it.
    private static func awaitExit(of pid: pid_t, _ life: TSLocked<Life>, _ reaped: DispatchSemaphore) {
        var info = siginfo_t()
        var failure: Int32 = 0
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            if errno != EINTR {
                failure = errno
                break
            }
        }
        let now = tsMonotonicNow()
        life.withLock { life in
            life.exitedAt = now
            guard failure == 0 else {
                life.termination = .unknown(failure)
                return
            }
            var status: Int32 = 0
            let rc = tsRetryEINTR { waitpid(pid, &status, 0) }
            life.termination = rc == pid ? Termination(waitStatus: status) : .unknown(errno)
        }
        reaped.signal()
    }
}

/// Runs `body` where a failure can only be reported (a deinit, a clean-up): on this process's stderr.
func reportFailure(_ body: () throws -> Void) {
    do {
        try body()
    } catch {
        tsWarn("\(error)")
    }
}

/// Writes "TestSupport: `message`" and a newline to this process's stderr (descriptor 2).
func tsWarn(_ message: String) {
    let line = Array("TestSupport: \(message)\n".utf8)
    _ = line.withUnsafeBytes { bytes in tsRetryEINTR { write(STDERR_FILENO, bytes.baseAddress, bytes.count) } }
}
