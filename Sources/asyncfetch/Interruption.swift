import Fetch
import Loader
import Support
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM for a run (SPEC §6).
///
/// The signal handler (`EarlySignals`, installed when the process starts)
/// only writes the signal number to a pipe (the one async-signal-safe thing
/// to do); a dedicated thread reads it and acts. A signal that came before
/// this type existed is the first one.
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
    /// The outputs a report nobody reads may hold up: standard error only
    /// when standard output carries a body (`-o -`), whose copy ends when
    /// the run is cancelled (`ImageLoader.copy`), however full its pipe or
    /// terminal, unless that copy could not avoid waiting in write(2)
    /// (`Console.bodyCopyMayBlockStandardOutput`): then standard output too.
    private let reportOutputs: [(fd: Int32, name: String)]
    private let bodyOnStandardOutput: Bool

    /// The first signal received, if any.
    var signal: Int32? { state.withLock { $0.first } }

    /// Takes SIGINT and SIGTERM over from start-up and starts the thread.
    /// A signal that came before is the first one, taken here: the run is
    /// interrupted before it begins, whenever the thread would have read it.
    init(bodyOnStandardOutput: Bool) throws {
        reportOutputs = (bodyOnStandardOutput ? [] : [(1, "output")]) + [(2, "error")]
        self.bodyOnStandardOutput = bodyOnStandardOutput
        guard let pipe = SelfPipe() else {
            throw RuntimeFailure("cannot set up signal handling: pipe: \(String(cString: strerror(errno)))")
        }
        let early = try EarlySignals.handOver(to: pipe.writeFD)
        let readFD = pipe.readFD
        try startDetachedThread(name: "signal-watcher") { [self] in watch(readFD) }
        if let early { received(early) }
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
            received(Int32(byte))
        }
    }

    private func received(_ signo: Int32) {
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

    private func startGraceTimer(_ signo: Int32) {
        let started: Void? = try? startDetachedThread(name: "grace-timer") { [self] in
            // A report nobody reads (standard output or error a full pipe, a
            // terminal stopped with Ctrl-S) would hold the run for the whole
            // grace: the exit is due within a second (SPEC §6).
            usleep(useconds_t(Defaults.blockedOutputLook * 1_000_000))
            if let blocked = blockedOutputs(waiting: Defaults.blockedOutputWait).first {
                exitNow(signo, reason: "the interrupted run cannot write its report (nobody reads standard \(blocked)): exiting")
            }
            let rest = Defaults.interruptGrace - Defaults.blockedOutputLook - Defaults.blockedOutputWait
            usleep(useconds_t(max(0, rest) * 1_000_000))
            exitNow(signo, reason: "the interrupted run did not end within \(HumanUnits.duration(Defaults.interruptGrace)): exiting")
        }
        if started == nil { exitNow(signo, reason: "cannot wait for the interrupted run: exiting") }
    }

    /// "output" and/or "error" (of `reportOutputs`) when that descriptor has
    /// had no room for a write for `seconds` (`Console.blocked`).
    private func blockedOutputs(waiting seconds: Double) -> [String] {
        let stuckBody = bodyOnStandardOutput && Console.bodyCopyMayBlockStandardOutput
        let outputs = (stuckBody ? [(fd: Int32(1), name: "output")] : []) + reportOutputs
        let blocked = Console.blocked(outputs.map(\.fd), waiting: seconds)
        return outputs.filter { blocked.contains($0.fd) }.map(\.name)
    }

    /// Exits with 128 + `signo`, saying why on stderr. First `onSecond` (the
    /// reporter writes the lines already decided), and the message, each only
    /// when its output has room: a write to a full pipe would never end.
    private func exitNow(_ signo: Int32, reason: String) -> Never {
        let blocked = blockedOutputs(waiting: 0)
        if blocked.isEmpty { state.withLock { $0.onSecond }?() }
        if !blocked.contains("error") { Console.error("asyncfetch: \(reason)") }
        _exit(128 + signo)
    }
}
