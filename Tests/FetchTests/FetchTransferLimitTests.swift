import Fetch
import Foundation
import Support
import Testing
import TestSupport

/// `maxConcurrentTransfers`: the engine's own bound, with a queue inside the loop.
@Suite(.timeLimit(.minutes(3))) struct FetchTransferLimitTests {
    static let png = FetchConcurrencyTests.png

    @Test func noMoreThanTheLimitRunAtOnce() async throws {
        let server = try ScriptedServer()
        server.route("/slow.png", ScriptedResponse.ok(Self.png).delayed(0.1))
        let harness = try FetchHarness { $0.maxConcurrentTransfers = 3 }
        let bodies = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for index in 0..<15 { group.addTask { try await harness.fetch(server.url("/slow.png?n=\(index)")).body } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies.count == 15 && bodies.allSatisfy { $0 == Self.png })
        #expect(server.maxConcurrentRequests == 3)
        #expect(server.connectionsAccepted <= 3)
    }

    @Test func timeSpentWaitingForASlotDoesNotCountTowardsTheTimeout() async throws {
        let server = try ScriptedServer()
        server.route("/slow.png", ScriptedResponse.ok(Self.png).delayed(0.3))
        let harness = try FetchHarness { $0.maxConcurrentTransfers = 1; $0.timeout = 0.6; $0.retries = 0 }
        let outcomes = try await withThrowingTaskGroup(of: FetchHarness.Outcome.self) { group in
            for index in 0..<3 { group.addTask { try await harness.fetch(server.url("/slow.png?n=\(index)")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.allSatisfy { $0.error == nil }, "\(outcomes.compactMap(\.error))")
        #expect(outcomes.map(\.seconds).max() ?? 0 >= 0.85, "the third one waited for two others")
    }

    @Test func aQueuedTransferCancelsPromptlyWithoutReachingTheServer() async throws {
        let server = try ScriptedServer()
        server.route("/slow.png", ScriptedResponse.ok(Self.png).delayed(2))
        server.route("/queued.png", .ok(Self.png))
        let harness = try FetchHarness { $0.maxConcurrentTransfers = 1 }
        let blocker = Task { try await harness.fetch(server.url("/slow.png")) }
        #expect(await eventually(within: 5) { server.requestCount("/slow.png") == 1 })
        let queued = Task { try await harness.fetch(server.url("/queued.png")) }
        try await Task.sleep(nanoseconds: 100_000_000)
        let probe = PoolLagProbe()   // the answer resumes on the cooperative pool, late on a loaded machine
        defer { probe.stop() }
        let cancelledAt = monotonicSeconds()
        queued.cancel()
        let error = try await queued.value.error
        let elapsed = monotonicSeconds() - cancelledAt, lag = probe.worstLag
        #expect(error?.kind == .cancelled)
        // SPEC §6: "cancelling the Swift task that awaits a transfer aborts it promptly (well under 100 ms)".
        #expect(elapsed < 0.1 + lag, "cancellation took \(elapsed * 1000) ms (pool lag \(lag * 1000) ms)")
        blocker.cancel()
        #expect(try await blocker.value.error?.kind == .cancelled)
        #expect(server.requestCount("/queued.png") == 0)
        #expect(try await harness.fetch(server.url("/queued.png")).body == Self.png, "the slot was freed")
    }
}
