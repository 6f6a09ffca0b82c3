@testable import Fetch
import Foundation
import Support
import Testing
import TestSupport

/// `FetchClient.start` with `FetchHandle.cancel()` racing every stage: before
/// the start, right after it, while the transfer runs, while its completion
/// waits for or runs on a completion worker. Each fetch completes exactly
/// once, either with its whole body in the sink or `.cancelled`.
@Suite struct FetchStartCancelStressTests {
    /// Counts what the engine hands it; `write` may be slowed down to keep completions queued.
    final class CountingSink: BodySink, @unchecked Sendable {
        let bytes = Locked(0)
        let slow: Bool

        init(slow: Bool) { self.slow = slow }

        func write(_ chunk: UnsafeRawBufferPointer) throws {
            if slow { usleep(2_000) }
            bytes.withLock { $0 += chunk.count }
        }

        func reset() throws { bytes.withLock { $0 = 0 } }
    }

    @Test func aCancelAtAnyPointCompletesEachFetchOnceWithItsBodyOrCancelled() async throws {
        let server = try ScriptedServer()
        let small = Array(repeating: UInt8(7), count: 400)
        let large = Array(repeating: UInt8(9), count: 3 * Defaults.bufferedBodyLimit)
        server.route("/small", .ok(small, contentType: "text/plain"))
        server.route("/large", .ok(large, contentType: "text/plain"))
        var configuration = FetchConfiguration()
        configuration.retries = 0
        configuration.completionWorkers = 2
        let client = FetchClient(configuration: configuration)
        let perRound = 24
        var generator = SystemRandomNumberGenerator()
        var problems: [String] = []
        for round in 0..<100 {
            let calls = Locked([Int](repeating: 0, count: perRound))
            let outcomes = Locked([String](repeating: "", count: perRound))
            var handles: [FetchHandle] = []
            var sinks: [CountingSink] = []
            for index in 0..<perRound {
                let isLarge = index % 4 == 0
                let sink = CountingSink(slow: index % 3 == 0)
                let handle = FetchHandle()
                if index % 8 == 1 { handle.cancel() }   // before the start
                let expected = isLarge ? large.count : small.count
                client.start(FetchRequest(url: server.url(isLarge ? "/large?\(round)-\(index)" : "/small?\(round)-\(index)")),
                             into: sink, handle: handle) { result in
                    calls.withLock { $0[index] += 1 }
                    let outcome: String
                    switch result {
                    case .success(let response):
                        let got = sink.bytes.withLock { $0 }
                        outcome = response.status == 200 && got == expected ? "ok" : "short body \(got)/\(expected)"
                    case .failure(let error):
                        outcome = error.kind == .cancelled ? "cancelled" : "\(error.kind)"
                    }
                    outcomes.withLock { $0[index] = outcome }
                }
                if index % 8 == 2 { handle.cancel() }   // right after it
                handles.append(handle)
                sinks.append(sink)
            }
            // The rest at random points: during transfers, with completions queued or running.
            try? await Task.sleep(nanoseconds: UInt64.random(in: 0..<15_000_000, using: &generator))
            for (index, handle) in handles.enumerated() where index % 2 == 1 { handle.cancel() }
            let done = await eventually(within: 10) { calls.withLock { $0.allSatisfy { $0 >= 1 } } }
            try? await Task.sleep(nanoseconds: 30_000_000)   // a second completion would come by now
            let counts = calls.withLock { $0 }
            if !done || counts != Array(repeating: 1, count: perRound) {
                problems.append("round \(round): completions \(counts)")
            }
            let bad = outcomes.withLock { $0 }.enumerated().filter { $0.element != "ok" && $0.element != "cancelled" }
            if !bad.isEmpty { problems.append("round \(round): \(bad)") }
            let early = outcomes.withLock { $0 }.enumerated().filter { $0.offset % 8 == 1 && $0.element != "cancelled" }
            if !early.isEmpty { problems.append("round \(round): cancelled before the start yet \(early)") }
            withExtendedLifetime(sinks) {}
        }
        #expect(problems.isEmpty, "\(problems.prefix(8))")
    }
}
