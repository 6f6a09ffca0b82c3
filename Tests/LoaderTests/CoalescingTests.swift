import DiskCache
import Fetch
import Foundation
import Support
import Testing
import TestSupport

@testable import Loader

/// Two callers asking one loader for the same URL share one transfer, and
/// each caller's cancellation is its own.
@Suite(.timeLimit(.minutes(3))) struct CoalescingTests {
    /// A PNG trickled out over about 0.6 s.
    static func slowPNG() -> ScriptedResponse {
        ScriptedResponse.ok(LoaderHarness.png).trickled(chunk: 16, interval: 0.06)
    }

    @Test func twoCallersShareOneTransferAndBothSucceed() async throws {
        let h = try LoaderHarness()
        h.server.route("/slow.png", Self.slowPNG())
        let loader = h.loader()
        let url = h.server.url("/slow.png")
        async let a = loader.load(url)
        async let b = loader.load(url)
        let (first, second) = await (a, b)
        #expect(first.result?.source == .network && second.result?.source == .network)
        #expect(first.result?.path != nil && first.result?.path == second.result?.path)
        #expect(h.server.requestCount("/slow.png") == 1)
    }

    @Test func theSameURLSpelledDifferentlyIsOneTransfer() async throws {
        let h = try LoaderHarness()
        h.server.route("/slow.png", Self.slowPNG())
        let loader = h.loader()
        async let a = loader.load(h.server.url("/slow.png"))
        async let b = loader.load("HTTP://127.0.0.1:\(h.server.port)/slow.png#top")
        let (first, second) = await (a, b)
        #expect(first.result != nil && second.result != nil)
        #expect(h.server.requestCount("/slow.png") == 1)
    }

    @Test func cancellingOneCallerLeavesTheOtherToSucceed() async throws {
        let h = try LoaderHarness()
        h.server.route("/slow.png", Self.slowPNG())
        let loader = h.loader()
        let url = h.server.url("/slow.png")
        let survivor = Task { await loader.load(url) }
        #expect(await h.server.requestsArrive("/slow.png"))
        let cancelled = Task { await loader.load(url) }
        #expect(await Self.joined(loader, callers: 2), "the second caller never joined the transfer in flight")
        cancelled.cancel()
        let gone = await cancelled.value
        #expect(gone.error?.kind == .cancelled)
        let kept = await survivor.value
        #expect(kept.result?.source == .network)
        #expect(h.server.requestCount("/slow.png") == 1)
        #expect(try h.entry("/slow.png") != nil)
    }

    @Test func cancellingEveryCallerAbortsTheTransferAndCleansUp() async throws {
        let h = try LoaderHarness()
        h.server.route("/slow.png", ScriptedResponse.ok(LoaderHarness.png).trickled(chunk: 8, interval: 0.2))
        let loader = h.loader()
        let url = h.server.url("/slow.png")
        let a = Task { await loader.load(url) }
        let b = Task { await loader.load(url) }
        #expect(await h.server.requestsArrive("/slow.png"))
        #expect(await Self.joined(loader, callers: 2), "both callers never waited on the one transfer")
        let probe = PoolLagProbe()   // the callers and the load resume on the cooperative pool, late on a busy machine
        defer { probe.stop() }
        let started = monotonicSeconds()
        a.cancel()
        b.cancel()
        let (first, second) = (await a.value, await b.value)
        let elapsed = monotonicSeconds() - started, lag = probe.worstLag
        #expect(first.error?.kind == .cancelled && second.error?.kind == .cancelled)
        // SPEC §6: "cancelling the Swift task that awaits a transfer aborts it promptly (well
        // under 100 ms) and leaves no temporary file behind" (the next chunk is 0.2 s away).
        #expect(elapsed < 0.1 + lag, "cancellation took \(elapsed * 1000) ms (pool lag \(lag * 1000) ms)")
        #expect(h.temporaryFiles.isEmpty, "the last caller returns after the temporary file is gone")
        #expect(try h.entry("/slow.png") == nil)
        // The server sees the connection go away well before the 3 s the body would take.
        let deadline = monotonicSeconds() + 2
        while h.server.requestsInFlight > 0 && monotonicSeconds() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(h.server.requestsInFlight == 0)
        // A new caller after the abandoned load starts a new transfer, not the cancelled one.
        h.server.route("/slow.png", .ok(LoaderHarness.png))
        #expect(await loader.load(url).result?.source == .network)
        #expect(h.server.requestCount("/slow.png") == 2)
    }

    @Test func aCallerCancelledBeforeItStartsDoesNotDisturbTheOther() async throws {
        let h = try LoaderHarness()
        h.server.route("/slow.png", Self.slowPNG())
        let loader = h.loader()
        let url = h.server.url("/slow.png")
        let survivor = Task { await loader.load(url) }
        #expect(await h.server.requestsArrive("/slow.png"))
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await loader.load(url)
        }
        #expect(await early.value.error?.kind == .cancelled)
        #expect(await survivor.value.result?.source == .network)
        #expect(h.server.requestCount("/slow.png") == 1)
    }

    /// Waits (30 s at most) until `callers` callers wait on the loads in flight.
    static func joined(_ loader: ImageLoader, callers: Int) async -> Bool {
        let deadline = monotonicSeconds() + 30
        while loader.callersWaiting < callers {
            if monotonicSeconds() > deadline { return false }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return true
    }

    @Test func manyCallersOneTransfer() async throws {
        let h = try LoaderHarness()
        h.server.route("/slow.png", Self.slowPNG())
        let loader = h.loader()
        let url = h.server.url("/slow.png")
        let phases = await withTaskGroup(of: Phase.self) { group in
            for _ in 0..<20 { group.addTask { await loader.load(url) } }
            var all: [Phase] = []
            for await phase in group { all.append(phase) }
            return all
        }
        #expect(phases.allSatisfy { $0.result?.source == .network })
        #expect(h.server.requestCount("/slow.png") == 1)
    }
}
