import Foundation
import Loader
import Support
import Testing
import TestSupport

/// What a batch's consumer asks for (`EventDemand`): no `loading` events
/// when it does not read them, and every result still reaching it promptly
/// when no later event comes to wake it. (The backpressure with long runs:
/// `LoadBatchTests.aTinyBacklogNeverStallsTheBatch`.)
@Suite(.timeLimit(.minutes(3))) struct EventDemandTests {
    /// The reporter's demand off a terminal: runs of 256, 25 ms, a 50 ms tail.
    static let relaxed = EventDemand(loading: false, latency: 0.025, tailLatency: 0.05, runLength: 256)

    @Test func withoutLoadingEachURLHasOnlyItsEndAndWithItLoadingComesFirst() async throws {
        let h = try LoaderHarness()
        let paths = (0..<30).map { "/d\($0).png" }
        for path in paths { h.server.route(path, .ok(LoaderHarness.png, headers: [("Cache-Control", "no-store")])) }
        let urls = paths.map { h.server.url($0) }

        var quiet: [String: [String]] = [:]
        for await event in h.loader().batch(urls, demand: Self.relaxed) { quiet[event.url, default: []].append(event.phase.name) }
        #expect(quiet.count == 30 && quiet.values.allSatisfy { $0 == ["success"] }, "\(quiet)")

        var all: [String: [String]] = [:]
        for await event in h.loader().batch(urls) { all[event.url, default: []].append(event.phase.name) }
        #expect(all.count == 30 && all.values.allSatisfy { $0 == ["loading", "success"] }, "\(all)")
    }

    /// A result that no later event follows (the next transfer takes 3 s)
    /// still reaches a waiting consumer at once: the backstop timer wakes
    /// it, not the batch's end. Its bound is ~30 ms (`everything`), ~75 ms
    /// (`relaxed`); 0.5 s here leaves room for a loaded machine.
    @Test(arguments: [EventDemand.everything, EventDemandTests.relaxed])
    func aResultNoLaterEventFollowsReachesTheConsumerPromptly(demand: EventDemand) async throws {
        let h = try LoaderHarness()
        h.server.route("/fast.png", .ok(LoaderHarness.png))
        h.server.route("/slow.png", .ok(LoaderHarness.png).delayed(3))
        let loader = h.loader { $0.jobs = 1; $0.jobsPerHost = 1 }
        let probe = PoolLagProbe()   // the consumer resumes on the cooperative pool, late on a busy machine
        defer { probe.stop() }
        let started = monotonicSeconds()
        let batch = loader.batch([h.server.url("/fast.png"), h.server.url("/slow.png")], demand: demand)
        var waited: Double?
        var ends = 0
        for await event in batch where event.phase.isTerminal {
            ends += 1
            if event.url.hasSuffix("/fast.png") {
                // From its end (its start plus its duration) to here.
                waited = monotonicSeconds() - started - event.duration
                batch.cancel()
            }
        }
        #expect(ends == 2)
        let delay = try #require(waited)
        #expect(delay < 0.5 + probe.worstLag, "the first result waited \(delay) s in the queue (pool lag \(probe.worstLag) s)")
    }

    /// The tool's reporter asks for `loading` only for `--json` (human
    /// lines have none), and for results off a terminal accepts a longer wait.
    /// Latencies a caller may write without reading the batch: below 0, NaN,
    /// `.infinity` (set after `init` too). Each trapped the process in the
    /// batch's timer; now each URL still gets its one terminal event.
    @Test func outOfRangeLatenciesStillReportEveryURL() async throws {
        let h = try LoaderHarness()
        let paths = (0..<3).map { "/l\($0).png" }
        for path in paths { h.server.route(path, .ok(LoaderHarness.png)) }
        var infinite = EventDemand(loading: true, latency: 0.01, tailLatency: 0.01, runLength: 1)
        infinite.tailLatency = .infinity
        let demands = [EventDemand(loading: false, latency: -1, tailLatency: -1, runLength: 1),
                       EventDemand(loading: false, latency: .nan, tailLatency: .nan, runLength: 4), infinite]
        for demand in demands {
            var ended: [String] = []
            for await event in h.loader().batch(paths.map { h.server.url($0) }, demand: demand) where event.phase.isTerminal {
                ended.append(event.phase.name)
            }
            #expect(ended == ["success", "success", "success"], "\(demand)")
        }
    }

    @Test func theReporterAsksForLoadingOnlyForJSON() {
        let json = Reporter(style: .json, quiet: false, verbose: false, resultsToStderr: false, progress: .off).demand
        let human = Reporter(style: .human, quiet: false, verbose: false, resultsToStderr: false, progress: .off).demand
        #expect(json.loading && !human.loading)
        #expect(human.latency == json.latency && human.latency >= EventDemand.everything.latency)
        #expect(human.latency + human.tailLatency <= 0.1, "a result waits at most ~0.1 s")
    }
}
