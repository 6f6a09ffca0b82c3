import Fetch

/// Following a `BatchRun` to its end: every event reported as it comes,
/// the progress bar fed from the run, the run stopped once its results can
/// no longer be written, and the ending's counts taken for the summary. The
/// summary itself (`finish`) and the exit status stay with the caller.
extension Reporter {
    /// What following a run came to: the run's `Ending`, and whether it was
    /// stopped because the results could no longer be written (`outputError`
    /// says why).
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
        attachProgress(transfers, hosts: { run.events.hostActivity }) { run.progress }
        let ticker = startTicker()
        var stopped = false
        // A run of events at a time: one lock for the batch's queue and one for the output per run.
        var events: [LoadEvent] = []
        events.reserveCapacity(Self.eventsPerReport)
        while true {
            await run.events.next(into: &events, limit: Self.eventsPerReport)
            if events.isEmpty { break }
            report(contentsOf: events)
            if !stopped && outputBroken {
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
