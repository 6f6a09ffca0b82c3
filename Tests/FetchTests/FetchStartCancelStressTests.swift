@testable import Fetch
import Foundation
import Support
import Testing
import TestSupport

/// `FetchClient.start` with `FetchHandle.cancel()` racing every stage: before
/// the start, right after it, while the transfer runs, while its completion
/// waits for or runs on a completion worker. Each fetch completes exactly
/// once, either with its whole body in the sink or `.cancelled`; a paused
/// transfer cancelled leaves nothing behind in the easy handle the next one reuses.
@Suite struct FetchStartCancelStressTests {
    /// Counts what the engine hands it; `write` may be slowed down to keep completions queued.
    final class CountingSink: BodySink, @unchecked Sendable {
        let bytes = Locked(0)
        /// Bytes that are not this URL's (its body is `fill` repeated).
        let foreign = Locked(0)
        let slow: Bool
        let fill: UInt8

        init(slow: Bool, fill: UInt8) {
            self.slow = slow
            self.fill = fill
        }

        func write(_ chunk: UnsafeRawBufferPointer) throws {
            if slow { usleep(2_000) }
            let wrong = chunk.reduce(0) { $0 + ($1 == fill ? 0 : 1) }
            foreign.withLock { $0 += wrong }
            bytes.withLock { $0 += chunk.count }
        }

        func reset() throws {
            bytes.withLock { $0 = 0 }
            foreign.withLock { $0 = 0 }
        }
    }

    @Test func aCancelAtAnyPointCompletesEachFetchOnceWithItsBodyOrCancelled() async throws {
        let server = try ScriptedServer()
        let small = Array(repeating: UInt8(7), count: 400)
        let large = Array(repeating: UInt8(9), count: 16 * Defaults.bufferedBodyLimit)   // paused: more chunks than buffers
        server.route("/small", .ok(small, contentType: "text/plain"))
        server.route("/large", .ok(large, contentType: "text/plain"))
        var configuration = FetchConfiguration()
        configuration.retries = 0
        configuration.completionWorkers = 2
        configuration.transferLoops = 1   // one loop: its easy handles are reused, paused ones included
        let client = FetchClient(configuration: configuration)
        let perRound = 24
        var generator = SystemRandomNumberGenerator()
        var problems: [String] = []
        for round in 0..<40 {
            let calls = Locked([Int](repeating: 0, count: perRound))
            let outcomes = Locked([String](repeating: "", count: perRound))
            var handles: [FetchHandle] = []
            var sinks: [CountingSink] = []
            for index in 0..<perRound {
                let isLarge = index % 3 == 0   // 3, 15, 21 cancelled at a random point, 9 before, 18 after the start
                let sink = CountingSink(slow: isLarge || index % 3 == 0, fill: isLarge ? 9 : 7)
                let handle = FetchHandle()
                if index % 8 == 1 { handle.cancel() }   // before the start
                let expected = isLarge ? large.count : small.count
                client.start(FetchRequest(url: server.url(isLarge ? "/large?\(round)-\(index)" : "/small?\(round)-\(index)")),
                             into: sink, handle: handle) { result in
                    calls.withLock { $0[index] += 1 }
                    let outcome: String
                    switch result {
                    case .success(let response):
                        let got = sink.bytes.withLock { $0 }, foreign = sink.foreign.withLock { $0 }
                        outcome = response.status == 200 && got == expected && foreign == 0
                            ? "ok" : "body \(got)/\(expected) bytes, \(foreign) not its own"
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
            try? await Task.sleep(nanoseconds: UInt64.random(in: 0..<40_000_000, using: &generator))
            for (index, handle) in handles.enumerated() where index % 2 == 1 { handle.cancel() }
            let done = await eventually(within: 10) { calls.withLock { $0.allSatisfy { $0 >= 1 } } }
            try? await Task.sleep(nanoseconds: 30_000_000)   // a second completion would come by now
            let counts = calls.withLock { $0 }
            if !done || counts != Array(repeating: 1, count: perRound) {
                let late = await eventually(within: 30) { calls.withLock { $0.allSatisfy { $0 >= 1 } } }
                problems.append("round \(round): completions \(counts) after 10 s; all within 40 s: \(late)")
            }
            let bad = outcomes.withLock { $0 }.enumerated().filter { $0.element != "ok" && $0.element != "cancelled" }
            if !bad.isEmpty { problems.append("round \(round): \(bad)") }
            let early = outcomes.withLock { $0 }.enumerated().filter { $0.offset % 8 == 1 && $0.element != "cancelled" }
            if !early.isEmpty { problems.append("round \(round): cancelled before the start yet \(early)") }
            withExtendedLifetime(sinks) {}
        }
        #expect(problems.isEmpty, "\(problems.prefix(8))")
    }

    /// A large body whose end is the connection's close, or a last chunk of
    /// a chunked body, while the transfer is paused for a slow sink: libcurl
    /// must still deliver every byte and end the transfer once resumed.
    @Test(arguments: ["close", "chunked", "length"])
    func aPausedBodyEndingWhileItWaitsStillCompletes(framing: String) async throws {
        let server = try ScriptedServer()
        let body = Array(repeating: UInt8(9), count: 40 * Defaults.bufferedBodyLimit)
        var head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
        var wire: [UInt8] = []
        switch framing {
        case "close":
            head += "Connection: close\r\n\r\n"
            wire = Array(head.utf8) + body
        case "chunked":
            head += "Transfer-Encoding: chunked\r\n\r\n"
            wire = Array(head.utf8)
            var offset = 0
            while offset < body.count {
                let size = min(50_000, body.count - offset)
                wire += Array((String(size, radix: 16) + "\r\n").utf8) + body[offset..<offset + size] + Array("\r\n".utf8)
                offset += size
            }
            wire += Array("0\r\n\r\n".utf8)
        default:
            head += "Content-Length: \(body.count)\r\n\r\n"
            wire = Array(head.utf8) + body
        }
        server.route("/body", .rawBytes(wire))
        var configuration = FetchConfiguration()
        configuration.retries = 0
        configuration.completionWorkers = 1
        let client = FetchClient(configuration: configuration)
        for round in 0..<5 {
            let sink = CountingSink(slow: true, fill: 9)
            let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<FetchResponse, FetchError>, Never>) in
                client.start(FetchRequest(url: server.url("/body?\(round)")), into: sink, handle: FetchHandle()) { continuation.resume(returning: $0) }
            }
            #expect(try result.get().status == 200, "\(framing) round \(round)")
            #expect(sink.bytes.withLock { $0 } == body.count, "\(framing) round \(round)")
            #expect(sink.foreign.withLock { $0 } == 0)
        }
    }
}
