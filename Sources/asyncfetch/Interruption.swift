import Fetch
import Loader
import Support
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The write end of the self-pipe; set once, before the handler is installed
/// (an atomic: the handler may read it on any thread, and must not take a lock).
private let interruptionPipe = Atomic<Int32>(-1)

/// SIGINT and SIGTERM for a run (SPEC §6).
///
/// The signal handler only writes the signal number to a pipe (the one
/// async-signal-safe thing to do); a dedicated thread reads it and acts.
/// This works whichever thread the kernel picks for the signal, unlike
/// `sigwait`, which needs the signal blocked in every thread, including the
/// ones the Swift runtime started before `main` ran.
///
/// - first signal: `onFirst` runs (the batch is cancelled: no new
///   transfers, those in flight aborted, every URL still reported), and the
///   run ends normally with exit status 128 + signal;
/// - a second signal, or a run still going `Defaults.interruptGrace`
///   seconds after the first: `onSecond` runs, then the process exits at
///   once with 128 + signal.
final class Interruption: Sendable {
    private struct State {
        var first: Int32?
        var onFirst: (@Sendable () -> Void)?
        var onSecond: (@Sendable () -> Void)?
    }

    private let state = Locked(State())

    /// The first signal received, if any.
    var signal: Int32? { state.withLock { $0.first } }

    /// Installs the handlers for SIGINT and SIGTERM and starts the thread.
    init() throws {
        guard let pipe = SelfPipe() else {
            throw RuntimeFailure("cannot set up signal handling: pipe: \(String(cString: strerror(errno)))")
        }
        interruptionPipe.store(pipe.writeFD, ordering: .sequentiallyConsistent)
        for signo in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signo in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: signo)
                _ = write(interruptionPipe.load(ordering: .sequentiallyConsistent), &byte, 1)
                errno = saved
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            guard sigaction(signo, &action, nil) == 0 else {
                throw RuntimeFailure("cannot set up signal handling: sigaction: \(String(cString: strerror(errno)))")
            }
        }
        let readFD = pipe.readFD
        try startDetachedThread(name: "signal-watcher") { [self] in watch(readFD) }
    }

    /// `action` runs on the first signal (at once if one already came).
    func onFirstSignal(_ action: @escaping @Sendable () -> Void) {
        let already = state.withLock { state -> Bool in
            state.onFirst = action
            return state.first != nil
        }
        if already { action() }
    }

    /// `action` runs just before the process exits on a second signal.
    func onSecondSignal(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.onSecond = action }
    }

    private func watch(_ fd: Int32) {
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1 else { return }
            let signo = Int32(byte)
            let action = state.withLock { state -> (@Sendable () -> Void)? in
                guard state.first == nil else { return nil }
                state.first = signo
                return state.onFirst ?? {}
            }
            if let action {
                action()
                startGraceTimer(signo)
            } else {
                exitNow(signo, reason: "interrupted again: exiting at once")
            }
        }
    }

    private func startGraceTimer(_ signo: Int32) {
        let started: Void? = try? startDetachedThread(name: "grace-timer") { [self] in
            // A report nobody reads (standard output or error a full pipe, a
            // terminal stopped with Ctrl-S) would hold the run for the whole
            // grace: the exit is due within a second (SPEC §6).
            usleep(useconds_t(Defaults.blockedOutputLook * 1_000_000))
            if let blocked = Self.blockedOutputs(waiting: Defaults.blockedOutputWait).first {
                exitNow(signo, reason: "the interrupted run cannot write its report (nobody reads standard \(blocked)): exiting")
            }
            let rest = Defaults.interruptGrace - Defaults.blockedOutputLook - Defaults.blockedOutputWait
            usleep(useconds_t(max(0, rest) * 1_000_000))
            exitNow(signo, reason: "the interrupted run did not end within \(HumanUnits.duration(Defaults.interruptGrace)): exiting")
        }
        if started == nil { exitNow(signo, reason: "cannot wait for the interrupted run: exiting") }
    }

    /// "output" and/or "error" when that descriptor has had no room for a
    /// write for `seconds` (a write to it would block); empty when both take
    /// writes, or refuse them at once (a closed pipe, a bad descriptor).
    private static func blockedOutputs(waiting seconds: Double) -> [String] {
        let deadline = monotonicSeconds() + seconds
        var blocked: [String] = []
        for (fd, name) in [(Int32(1), "output"), (Int32(2), "error")] {
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            var ready: Int32
            repeat {
                let left = max(0, deadline - monotonicSeconds())
                ready = poll(&descriptor, 1, Int32((left * 1000).rounded(.up)))
            } while ready < 0 && errno == EINTR
            if ready == 0 { blocked.append(name) }
        }
        return blocked
    }

    /// Exits with 128 + `signo`, saying why on stderr. First `onSecond` (the
    /// reporter writes the lines already decided), and the message, each only
    /// when its output has room: a write to a full pipe would never end.
    private func exitNow(_ signo: Int32, reason: String) -> Never {
        let blocked = Self.blockedOutputs(waiting: 0)
        if blocked.isEmpty { state.withLock { $0.onSecond }?() }
        if !blocked.contains("error") { Console.error("asyncfetch: \(reason)") }
        _exit(128 + signo)
    }
}
