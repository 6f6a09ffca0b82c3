import DiskCache
import Fetch
import ImageFormats
import Loader
import Support
import TestSupport
import Testing

/// RFC 5861 §3 `stale-while-revalidate`: inside the window a stale copy is
/// reported at once (`success`, source `stale`, reason
/// `stale-while-revalidate`) and revalidated in the background; the
/// refresh completes before a batch ends. And `loading` carries the stored
/// copy while a stale entry is revalidated in the foreground.
@Suite(.timeLimit(.minutes(3))) struct StaleWhileRevalidateTests {
    /// `/swr.png`: max-age=1 with a 60 s window; revalidation answers 304
    /// (max-age=600) after `delay` seconds.
    static func server(delay: Double = 0, window: String = "stale-while-revalidate=60") throws -> LoaderHarness {
        let h = try LoaderHarness()
        h.server.route("/swr.png") { request in
            guard request.header("If-None-Match") == "\"v1\"" else {
                return .ok(LoaderHarness.png, headers: [("Cache-Control", "max-age=1, \(window)"), ("ETag", "\"v1\"")])
            }
            var notModified = ScriptedResponse.notModified(headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=600")])
            notModified.delayBeforeHeaders = delay
            return notModified
        }
        return h
    }

    static func waitUntilStale() async throws { try await Task.sleep(nanoseconds: 1_200_000_000) }

    @Test func insideTheWindowTheStaleCopyIsReportedAtOnceAndRefreshed() async throws {
        let h = try Self.server(delay: 1)
        let path = try #require(await h.load("/swr.png").result?.path)
        try await Self.waitUntilStale()
        let loader = h.loader()
        let start = monotonicSeconds()
        let stale = try #require(await loader.load(h.server.url("/swr.png")).result)
        #expect(monotonicSeconds() - start < 0.5)   // not held up by the 1 s revalidation
        #expect(stale.source == .stale && stale.reason == "stale-while-revalidate" && stale.path == path)
        await loader.backgroundRefreshesFinished()
        #expect(h.server.conditionalRequests("/swr.png") == 1)
        #expect(await h.load("/swr.png").source == .cache)   // the 304 made it fresh for 600 s
    }

    @Test func aBatchReportsTheStaleCopyThenTheRefreshBeforeItEnds() async throws {
        let h = try Self.server(delay: 0.3)
        _ = await h.load("/swr.png")
        try await Self.waitUntilStale()
        var events: [LoadEvent] = []
        for await event in h.loader().batch([h.server.url("/swr.png")]) { events.append(event) }
        #expect(events.count == 2)
        #expect(events.first?.phase.result?.source == .stale && events.first?.refreshed == false)
        #expect(events.last?.phase.result?.source == .revalidated && events.last?.refreshed == true)
    }

    /// SPEC §5: "In the library, `loading` carries the stored copy while the
    /// refresh runs": the sequence of phases shows the copy at once, then
    /// ends with what the refresh found (it ended with the stale copy, and
    /// the refresh's outcome reached no one who iterated it).
    @Test func phasesCarryTheStaleCopyAsLoadingThenEndWithTheRefresh() async throws {
        let h = try Self.server(delay: 0.3)
        let path = try #require(await h.load("/swr.png").result?.path)
        try await Self.waitUntilStale()
        var phases: [(phase: Phase, at: Double)] = []
        let start = monotonicSeconds()
        for await phase in h.loader().phases(for: h.server.url("/swr.png")) { phases.append((phase, monotonicSeconds() - start)) }
        #expect(phases.map(\.phase.name) == ["loading", "success"])
        guard case .loading(let stored?)? = phases.first?.phase else {
            Issue.record("loading without the stored copy: \(phases.map(\.phase.name))")
            return
        }
        #expect(stored.path == path && stored.source == .stale && stored.reason == "stale-while-revalidate")
        #expect(phases[0].at < 0.25, "the stored copy comes at once, not after the 0.3 s refresh")
        #expect(phases.last?.phase.result?.source == .revalidated && phases.last?.phase.result?.path == path)
        #expect(h.server.conditionalRequests("/swr.png") == 1)
    }

    @Test func pastTheWindowTheRevalidationIsInTheForeground() async throws {
        let h = try Self.server(window: "stale-while-revalidate=0")
        _ = await h.load("/swr.png")
        try await Self.waitUntilStale()
        #expect(await h.load("/swr.png").source == .revalidated)
    }

    @Test func mustRevalidateForbidsIt() async throws {
        let h = try Self.server(window: "stale-while-revalidate=60, must-revalidate")
        _ = await h.load("/swr.png")
        try await Self.waitUntilStale()
        #expect(await h.load("/swr.png").source == .revalidated)
    }

    @Test func loadingCarriesTheStoredCopyWhileItIsRevalidated() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/old.png", headers: [("Cache-Control", "max-age=0")])
        let path = try #require(await h.load("/old.png").result?.path)
        var phases: [Phase] = []
        for await phase in h.loader().phases(for: h.server.url("/old.png")) { phases.append(phase) }
        guard case .loading(let stored?) = phases.first else {
            Issue.record("loading without the stored copy: \(phases.map(\.name))")
            return
        }
        #expect(stored.path == path && stored.source == .stale && stored.format == .png)
        #expect(phases.last?.result?.source == .revalidated)
        // A URL with nothing stored loads with nothing to show.
        h.server.revalidating("/new.png")
        var fresh: [Phase] = []
        for await phase in h.loader().phases(for: h.server.url("/new.png")) { fresh.append(phase) }
        guard case .loading(nil) = fresh.first else {
            Issue.record("expected loading(nil), got \(fresh.map(\.name))")
            return
        }
    }
}
