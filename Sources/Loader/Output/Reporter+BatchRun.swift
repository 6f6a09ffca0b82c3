import Fetch
#if canImport(Glibc)
import Glibc
#endif

/// Following a `BatchRun` to its end: every event reported as it comes,
/// the progress bar fed from the run, the run stopped once nobody reads its
/// results, and the ending's counts taken for the summary. The summary
/// itself (`finish`) and the exit status stay with the caller.
///
/// Results that cannot be written stop the run only when their reader went
/// away (`EPIPE`: `| head`), as SIGPIPE would. Any other failed write (a
/// full disk, an I/O error) loses the lines, not the work: the run goes on
/// to its end, every URL stored as it would have been, and `outputBroken`
/// tells the caller (the tool exits 1 with the reason): what a run does
/// does not depend on when its first line failed.
extension Reporter {
    /// What following a run came to: the run's `Ending`, and whether it was
    /// stopped because the results' reader went away (`outputError` is
    /// `EPIPE`).
    public struct Followed: Sendable {
        public let ending: BatchRun.Ending
        public let stopped: Bool
    }

    /// Reports `run`'s events until it ends, then finishes it (`interrupted`
    /// is read then; `sync` is `--sync`), with a warning when `--sync`
    /// failed. `transfers` is the byte count the bar shows (the one the
    /// run's fetch configuration counts into), nil without a bar.
    public func follow(_ run: BatchRun, transfers: TransferProgress?, interrupted: () -> Bool,
                       sync: Bool) async -> Followed {
        attachProgress(transfers, hosts: {
            let hosts = run.events.hostActivity
            return (hosts.active, hosts.paused, run.events.transfersRunning)
        }) { run.progress }
        let ticker = startTicker()
        var stopped = false
        // A run of events at a time: one lock for the batch's queue and one for the output per run.
        var events: [LoadEvent] = []
        events.reserveCapacity(Defaults.reportedEventsAtOnce)
        while true {
            await run.events.next(into: &events, limit: Defaults.reportedEventsAtOnce)
            if events.isEmpty { break }
            report(taking: &events)
            if !stopped && outputBroken && outputError == EPIPE {
                stopped = true
                run.stop()
            }
        }
        let ending = await run.finish(interrupted: interrupted(), sync: sync)
        ticker?.cancel()
        if let stats = ending.remoteStats { setRemoteStats(stats) }
        setHostCounts(ending.hosts)
        if let failure = ending.syncError { warn("--sync: \(failure.message)") }
        return Followed(ending: ending, stopped: stopped)
    }
}
