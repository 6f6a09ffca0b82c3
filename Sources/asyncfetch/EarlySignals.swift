import CStartup
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT and SIGTERM before a run's `Interruption` exists. The C corner
/// (`Sources/CStartup/EarlySignals.c`) catches them from the process's
/// start and records the first; then either a run takes them over
/// (`handOver`: the recorded one becomes its first signal, and the run ends
/// as SPEC §6 says, every URL reported, the summary, 130 or 143), or the
/// process does something else (`giveBack`: the `cache` commands, help,
/// version, a usage error), and a recorded signal ends it at once, killed
/// by it, as it would have been without the catch.
enum EarlySignals {
    /// From now on each signal's number is written to `pipe`. Returns the
    /// signal that came before, if one did: the run's first.
    static func handOver(to pipe: Int32) throws -> Int32? {
        let early = cstartup_hand_over_signals(pipe)
        guard early >= 0 else {
            throw RuntimeFailure("cannot set up signal handling: sigaction: \(String(cString: strerror(errno)))")
        }
        return early == 0 ? nil : early
    }

    /// SIGPIPE ignored for the rest of the process: a closed stdout shows up
    /// as EPIPE (and stops the run, exit 141) instead of killing the process
    /// with temporary files left behind. Not something to run without.
    static func ignoreSIGPIPE() throws {
        guard cstartup_ignore_sigpipe() == 0 else {
            throw RuntimeFailure("cannot ignore SIGPIPE: sigaction: \(String(cString: strerror(errno)))")
        }
    }

    /// The default disposition back; a signal that came already ends the
    /// process here. Does nothing once a run has taken the signals over.
    static func giveBack() {
        cstartup_signals_default()
    }
}
