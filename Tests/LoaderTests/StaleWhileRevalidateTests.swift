import DiskCache
import Fetch
import Foundation
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
    /// `held`: the 304 waits until the test lets it go (20 s at most).
    static func server(delay: Double = 0, held: HeldAnswer? = nil, window: String = "stale-while-revalidate=60") throws -> LoaderHarness {
        let h = try LoaderHarness()
        h.server.route("/swr.png") { request in
            guard request.header("If-None-Match") == "\"v1\"" else {
                return .ok(LoaderHarness.png, headers: [("Cache-Control", "max-age=1, \(window)"), ("ETag", "\"v1\"")])
            }
            held?.hold()
            var notModified = ScriptedResponse.notModified(headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=600")])
            notModified.delayBeforeHeaders = delay
            return notModified
        }
        return h
    }

    static func waitUntilStale() async throws { try await Task.sleep(nanoseconds: 1_200_000_000) }

    /// An answer the server holds until the test lets it go, or 20 s pass:
    /// what the test saw while `waitedItsTime` is false came before the answer.
    /// (The loader's transfer timeout must be longer, or a loader that waited
    /// for the answer would see a timeout, not the answer, and pass.)
    final class HeldAnswer: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let timedOut = Locked(false)

        func hold() {
            if gate.wait(timeout: .now() + 20) == .timedOut { timedOut.withLock { $0 = true } }
        }

        func letGo() { gate.signal() }

        /// Whether `hold` gave up waiting for the test (the loader waited for the answer).
        var waitedItsTime: Bool { timedOut.withLock { $0 } }
    }

    @Test func insideTheWindowTheStaleCopyIsReportedAtOnceAndRefreshed() async throws {
        let held = HeldAnswer()
        let h = try Self.server(held: held)
        let path = try #require(await h.load("/swr.png").result?.path)
        try await Self.waitUntilStale()
        let loader = h.loader { $0.fetch.timeout = 30 }   // the held answer gives up first
        let stale = try #require(await loader.load(h.server.url("/swr.png")).result)
        #expect(!held.waitedItsTime, "the stale copy came only after the revalidation's answer")
        held.letGo()
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
        let held = HeldAnswer()
        let h = try Self.server(held: held)
        let path = try #require(await h.load("/swr.png").result?.path)
        try await Self.waitUntilStale()
        var phases: [Phase] = []
        var firstBeforeTheAnswer = false
        for await phase in h.loader({ $0.fetch.timeout = 30 }).phases(for: h.server.url("/swr.png")) {
            if phases.isEmpty {
                firstBeforeTheAnswer = !held.waitedItsTime
                held.letGo()
            }
            phases.append(phase)
        }
        #expect(phases.map(\.name) == ["loading", "success"])
        guard case .loading(let stored?)? = phases.first else {
            Issue.record("loading without the stored copy: \(phases.map(\.name))")
            return
        }
        #expect(stored.path == path && stored.source == .stale && stored.reason == "stale-while-revalidate")
        #expect(firstBeforeTheAnswer, "the stored copy came only after the refresh's answer")
        #expect(phases.last?.result?.source == .revalidated && phases.last?.result?.path == path)
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
