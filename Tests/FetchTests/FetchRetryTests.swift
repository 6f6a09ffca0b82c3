@testable import Fetch
import Foundation
import Support
import Testing
import TestSupport

/// Retries: which failures are retried, how long the client waits, and that
/// the attempts are reported. Backoff is shortened with `retryBaseDelay`.
@Suite(.timeLimit(.minutes(3))) struct FetchRetryTests {
    static let png = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + Array(repeating: 7, count: 500)

    @Test func twoServiceUnavailableThenOKSucceedsOnTheThirdAttempt() async throws {
        let server = try ScriptedServer()
        server.route("/flaky.png", [.status(503), .status(503), .ok(Self.png)])
        let harness = try FetchHarness { $0.retries = 2; $0.retryBaseDelay = 0.01 }
        let outcome = try await harness.fetch(server.url("/flaky.png"))
        let response = try #require(outcome.response, "\(String(describing: outcome.error))")
        #expect(response.attempts == 3)
        #expect(outcome.body == Self.png)
        #expect(server.requestCount("/flaky.png") == 3)
    }

    @Test func withoutRetriesTheFirstServiceUnavailableFails() async throws {
        let server = try ScriptedServer()
        server.route("/flaky.png", [.status(503), .status(503), .ok(Self.png)])
        let harness = try FetchHarness { $0.retries = 0 }
        let error = try #require(try await harness.fetch(server.url("/flaky.png")).error)
        #expect(error.kind == .http)
        #expect(error.status == 503)
        #expect(error.attempts == 1)
        #expect(error.message == "HTTP 503 Service Unavailable")
        #expect(server.requestCount("/flaky.png") == 1)
    }

    @Test func tooManyRequestsWithRetryAfterWaitsThatLong() async throws {
        let server = try ScriptedServer()
        server.route("/busy.png", [.status(429, headers: [("Retry-After", "1")]), .ok(Self.png)])
        let harness = try FetchHarness { $0.retryBaseDelay = 0.001 }
        let outcome = try await harness.fetch(server.url("/busy.png"))
        let response = try #require(outcome.response)
        #expect(response.attempts == 2)
        #expect(outcome.seconds >= 0.95, "Retry-After: 1 must be honoured, waited \(outcome.seconds) s")
        #expect(outcome.seconds < 5)
    }

    @Test func retryAfterIsCappedAtTheMaximumDelay() async throws {
        let server = try ScriptedServer()
        server.route("/busy.png", [.status(503, headers: [("Retry-After", "3600")]), .ok(Self.png)])
        let harness = try FetchHarness { $0.retryMaxDelay = 0.2 }
        let outcome = try await harness.fetch(server.url("/busy.png"))
        #expect(outcome.response?.attempts == 2)
        #expect(outcome.seconds >= 0.19 && outcome.seconds < 5, "\(outcome.seconds) s: Retry-After asked for an hour")
    }

    /// A connection accepted and then closed ("Empty reply from server") or
    /// reset before any byte of an answer is a connect error (SPEC §5): retried,
    /// and flagged for a batch's host (`closedBeforeAnswer`), as `network`
    /// with libcurl's words. One closed after the status line is an answer that
    /// broke: not retried, not flagged.
    @Test func aConnectionClosedOrResetBeforeAnyAnswerIsRetriedAsAConnectError() async throws {
        let server = try ScriptedServer()
        server.route("/empty.png", [.rawBytes([]), .rawBytes([]), .ok(Self.png)])
        server.route("/reset.png", .reset)
        var headersOnly = ScriptedResponse.ok(Self.png)
        headersOnly.closeAfterHeaders = true
        server.route("/cut.png", headersOnly)
        let harness = try FetchHarness { $0.retries = 2; $0.retryBaseDelay = 0.01 }
        // Each on a new connection (libcurl itself retries a request whose reused connection died so).
        let reset = try #require(try await harness.fetch(server.url("/reset.png")).error)
        #expect(reset.kind == .network && reset.closedBeforeAnswer && !reset.responseStarted, "\(reset)")
        #expect(reset.message == "network error: Recv failure: Connection reset by peer", "\(reset)")
        #expect(reset.attempts == 3 && server.requestCount("/reset.png") == 3)
        let cut = try #require(try await harness.fetch(server.url("/cut.png")).error)
        #expect(cut.kind == .network && !cut.closedBeforeAnswer && cut.responseStarted, "\(cut)")
        #expect(cut.attempts == 1 && server.requestCount("/cut.png") == 1)
        let recovered = try await harness.fetch(server.url("/empty.png"))
        #expect(recovered.response?.attempts == 3, "\(String(describing: recovered.error))")
        #expect(recovered.body == Self.png)
        server.route("/empty0.png", .rawBytes([]))
        let once = try FetchHarness { $0.retries = 0 }
        let empty = try #require(try await once.fetch(server.url("/empty0.png")).error)
        #expect(empty.message == "network error: Empty reply from server" && empty.closedBeforeAnswer && empty.attempts == 1,
                "\(empty)")
    }

    /// Over https the connection is closed in the TLS handshake: kind `tls`
    /// with libcurl's words, and the same rule (retried, flagged). A handshake
    /// that fails with an answer (here a plain http server's "400 Bad
    /// Request" to the ClientHello) is not a close: not retried, not flagged.
    @Test func aTLSHandshakeClosedByTheServerIsRetriedAsAConnectError() async throws {
        let dropper = try ScriptedServer()
        dropper.dropsConnections = true
        let harness = try FetchHarness { $0.retries = 2; $0.retryBaseDelay = 0.01 }
        let closed = try #require(try await harness.fetch(dropper.httpsURL("/a.png")).error)
        #expect(closed.kind == .tls && closed.closedBeforeAnswer && closed.message.contains("SSL_ERROR_SYSCALL"), "\(closed)")
        #expect(closed.attempts == 3 && dropper.connectionsAccepted == 3, "\(dropper.connectionsAccepted) connections")
        let plain = try NginxServer(root: Paths.fixtures)
        let answered = try #require(try await harness.fetch("https://127.0.0.1:\(plain.port)/a.png").error)
        #expect(answered.kind == .tls && !answered.closedBeforeAnswer && answered.attempts == 1, "\(answered)")
    }

    /// A reset seen by one transfer does not make a later transfer's failed handshake a close:
    /// libcurl 7.88 keeps CURLINFO_OS_ERRNO on the easy handle until another error replaces
    /// it (cleared per transfer only since 8.8.0), and the handle is reused, so an https host
    /// that answers the ClientHello (here a plain http server) was retried and counted as one
    /// that drops connections when its transfer ran on the handle of an earlier reset.
    @Test func anEarlierTransfersResetDoesNotMakeAHandshakeFailureAClose() async throws {
        let server = try ScriptedServer()
        server.route("/reset.png", .reset)
        let plain = try NginxServer(root: Paths.fixtures)
        // One loop, one transfer at a time: the second fetch runs on the first one's handle.
        let harness = try FetchHarness { $0.retries = 2; $0.retryBaseDelay = 0.01; $0.transferLoops = 1 }
        let reset = try #require(try await harness.fetch(server.url("/reset.png")).error)
        #expect(reset.closedBeforeAnswer && reset.message.contains("Connection reset by peer"), "\(reset)")
        let answered = try #require(try await harness.fetch("https://127.0.0.1:\(plain.port)/a.png").error)
        #expect(answered.kind == .tls && !answered.closedBeforeAnswer && answered.attempts == 1, "\(answered)")
    }

    @Test func retriesAreExhaustedAndTheLastFailureReported() async throws {
        let server = try ScriptedServer()
        server.route("/down.png", .status(502))
        let harness = try FetchHarness { $0.retries = 3; $0.retryBaseDelay = 0.01 }
        let error = try #require(try await harness.fetch(server.url("/down.png")).error)
        #expect(error.status == 502)
        #expect(error.attempts == 4)
        #expect(server.requestCount("/down.png") == 4)
    }

    @Test func requestTimeoutIsRetriedButNotFoundIsNot() async throws {
        let server = try ScriptedServer()
        server.route("/408.png", [.status(408), .ok(Self.png)])
        server.route("/404.png", [.status(404), .ok(Self.png)])
        let harness = try FetchHarness { $0.retryBaseDelay = 0.01 }
        #expect(try await harness.fetch(server.url("/408.png")).response?.attempts == 2)
        let error = try #require(try await harness.fetch(server.url("/404.png")).error)
        #expect(error.status == 404 && error.attempts == 1)
    }

    @Test func connectErrorsAreRetried() async throws {
        let closedPort = try ScriptedServer()
        let url = closedPort.url("/gone.png")
        closedPort.stop()
        let harness = try FetchHarness { $0.retries = 2; $0.retryBaseDelay = 0.01 }
        let error = try #require(try await harness.fetch(url).error)
        #expect(error.kind == .connect)
        #expect(error.curlCode == 7)
        #expect(error.attempts == 3)
        #expect(error.message.hasPrefix("could not connect: Failed to connect to 127.0.0.1 port"), "\(error.message)")
    }

    @Test func aTimedOutAttemptIsRetriedAndTheSinkStartsOver() async throws {
        let server = try ScriptedServer()
        let body = (0..<400_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        // First attempt: more than the in-memory limit arrives, then the timeout hits.
        server.route("/big.png", [ScriptedResponse.ok(body).trickled(chunk: 150_000, interval: 0.3), .ok(body)])
        let harness = try FetchHarness { $0.timeout = 0.45; $0.retryBaseDelay = 0.01 }
        let outcome = try await harness.fetch(server.url("/big.png"))
        let response = try #require(outcome.response, "\(String(describing: outcome.error))")
        #expect(response.attempts == 2)
        #expect(response.bodyBytes == Int64(body.count))
        #expect(outcome.body == body, "the retried body must replace, not extend, the partial one")
    }

    @Test func cancellingDuringBackoffStopsPromptly() async throws {
        let server = try ScriptedServer()
        server.route("/busy.png", .status(503, headers: [("Retry-After", "5")]))
        let harness = try FetchHarness()
        // The fetch's end is noted where it resumes (one hop on the cooperative pool, which the
        // probe's lag covers), not when this test resumes after it.
        let task = Task { (try await harness.fetch(server.url("/busy.png")), monotonicSeconds()) }
        // A set-up wait: it ends as soon as the request is in (seconds on a busy machine).
        #expect(await eventually(within: 30) { server.requestCount("/busy.png") >= 1 })
        try await Task.sleep(nanoseconds: 50_000_000)
        let probe = PoolLagProbe()
        defer { probe.stop() }
        let cancelledAt = monotonicSeconds()
        task.cancel()
        let (outcome, ended) = try await task.value
        let error = try #require(outcome.error)
        #expect(error.kind == .cancelled)
        #expect(error.attempts == 1)
        let elapsed = ended - cancelledAt, lag = probe.worstLag
        // SPEC §6: "cancelling the Swift task that awaits a transfer aborts it promptly (well under 100 ms)".
        #expect(elapsed < 0.1 + lag, "the cancel took \(elapsed * 1000) ms (pool lag \(lag * 1000) ms)")
        #expect(server.requestCount("/busy.png") == 1)
    }

    /// A gate that lets the policy decide, and then, after the backoff, says
    /// whether the retry still goes out (a batch's host given up on meanwhile).
    final class RefusingGate: FetchAttemptGate {
        let refuses: Bool
        let asked = Locked(0)
        init(refuses: Bool) { self.refuses = refuses }
        func connected() {}
        func responding(status: Int) {}
        func answered(status: Int) {}
        func failed(_ error: FetchError) async -> FetchRetryVerdict { .usePolicy }
        func mayRetry() -> Bool {
            asked.withLock { $0 += 1 }
            return !refuses
        }
    }

    /// A retry whose owner no longer wants it after its backoff (its host was
    /// given up on) is not sent: the fetch fails with the last attempt's error.
    @Test(arguments: [true, false])
    func aRetryTheGateRefusesAfterItsBackoffIsNotSent(refuses: Bool) async throws {
        let server = try ScriptedServer()
        server.route("/flaky.png", [.status(503), .status(503), .ok(Self.png)])
        let client = FetchClient(configuration: { var c = FetchConfiguration(); c.retries = 2; c.retryBaseDelay = 0.01; return c }())
        let temp = try TempDirectory(prefix: "asyncfetch-refuse")
        let sink = try FileSink(path: temp.file("body"))
        defer { sink.remove() }
        let gate = RefusingGate(refuses: refuses)
        do {
            let response = try await client.fetch(FetchRequest(url: server.url("/flaky.png"), gate: gate), into: sink)
            #expect(!refuses && response.attempts == 3)
        } catch let error as FetchError {
            #expect(refuses && error.kind == .http && error.status == 503 && error.attempts == 1, "\(error)")
        }
        #expect(server.requestCount("/flaky.png") == (refuses ? 1 : 3))
        #expect(gate.asked.withLock { $0 } == (refuses ? 1 : 2))
    }

    /// A gate whose owner gave the host up (`refusal`), and that then stops the fetch;
    /// with `after`, the host is given up once that many attempts have failed
    /// (until then the policy retries them).
    final class GivenUpGate: FetchAttemptGate {
        let reason: String?
        let after: Int
        let failures = Locked<[FetchError]>([])
        init(reason: String?, after: Int = 0) {
            self.reason = reason
            self.after = after
        }
        func connected() {}
        func responding(status: Int) {}
        func answered(status: Int) {}
        func failed(_ error: FetchError) async -> FetchRetryVerdict {
            let count = failures.withLock { $0.append(error); return $0.count }
            return count <= after ? .usePolicy : .stop
        }
        func refusal() -> (kind: FetchError.Kind, detail: String)? {
            guard failures.withLock({ $0.count }) >= after else { return nil }
            return reason.map { (.timeout, $0) }
        }
    }

    /// An attempt whose owner has given its host up by the time it reaches its
    /// transfer loop (a URL started, or a retry let go, just before the give-up,
    /// arriving after the loop ended the host's attempts) fails there at once,
    /// with the owner's kind and reason, and sends nothing; without a refusal
    /// the same fetch is answered.
    @Test(arguments: [true, false])
    func anAttemptTheGateRefusesAtItsLoopFailsAtOnceWithTheReason(refused: Bool) async throws {
        let server = try ScriptedServer()
        // Refused, an attempt that waited for the server would end 5 s after its start (one that
        // fails at once, well under that even on a busy machine: --parallel saw 0.56 s).
        server.route("/slow.png", ScriptedResponse.ok(Self.png).delayed(refused ? 5 : 0.5))
        let client = FetchClient(configuration: { var c = FetchConfiguration(); c.retries = 2; c.retryBaseDelay = 0.01; return c }())
        let temp = try TempDirectory(prefix: "asyncfetch-refusal")
        let sink = try FileSink(path: temp.file("body"))
        defer { sink.remove() }
        let reason = "host 127.0.0.1:\(server.port) gave 3 timeouts in a row; not tried again in this run"
        let gate = GivenUpGate(reason: refused ? reason : nil)
        let started = monotonicSeconds()
        do {
            let response = try await client.fetch(FetchRequest(url: server.url("/slow.png"), gate: gate), into: sink)
            #expect(!refused && response.status == 200)
        } catch let error as FetchError {
            #expect(refused && error.kind == .timeout && error.message.contains(reason), "\(error)")
            #expect(error.attempts == 0, "the refused attempt was never made, yet it was counted")
            #expect(monotonicSeconds() - started < 2.5, "the refused attempt waited for the server")
        }
        #expect(server.requestCount("/slow.png") == (refused ? 0 : 1))
        #expect(gate.failures.withLock { $0.count } == (refused ? 1 : 0))
    }

    /// A retry refused at its loop (its host was given up on during the
    /// backoff) is not counted: the error says how many attempts were made.
    @Test func aRetryTheGateRefusesIsNotCountedAsAnAttempt() async throws {
        let server = try ScriptedServer()
        server.route("/busy.png", ScriptedResponse.status(503))
        let client = FetchClient(configuration: { var c = FetchConfiguration(); c.retries = 3; c.retryBaseDelay = 0.01; return c }())
        let temp = try TempDirectory(prefix: "asyncfetch-refusal")
        let sink = try FileSink(path: temp.file("body"))
        defer { sink.remove() }
        let gate = GivenUpGate(reason: "host given up on", after: 2)
        do {
            _ = try await client.fetch(FetchRequest(url: server.url("/busy.png"), gate: gate), into: sink)
            Issue.record("the fetch succeeded")
        } catch let error as FetchError {
            #expect(error.kind == .timeout && error.message.contains("host given up on"), "\(error)")
            #expect(error.attempts == 2, "\(error.attempts) attempts counted, 2 made")
        }
        #expect(server.requestCount("/busy.png") == 2)
    }

    @Test func backoffIsExponentialWithFullJitter() {
        let policy = RetryPolicy(retries: 5, baseDelay: 0.1, maxDelay: 1)
        let failure = FetchError(.http, url: "http://x/", status: 503)
        for attempt in 1...6 {
            let ceiling = min(1, 0.1 * Double(1 << (attempt - 1)))
            let samples = (0..<200).map { _ in policy.delay(after: attempt, error: failure) }
            #expect(samples.allSatisfy { $0 >= 0 && $0 <= ceiling }, "attempt \(attempt)")
            #expect(Set(samples).count > 150, "full jitter draws anywhere below the ceiling")
            #expect(samples.max()! > ceiling * 0.8)
        }
    }

    /// The delays a fetch sleeps before each retry when the configuration gives a negative or
    /// NaN delay: none at all, whatever the attempt, with or without a server's `Retry-After`
    /// (the delay is the cap then). Asserted on the values, not on a fetch's duration, which a
    /// loaded machine stretches.
    @Test func aNegativeOrNaNDelayIsNoWait() {
        let busy = FetchError(.http, url: "http://x/", status: 503,
                              headers: HTTPHeaders(parsing: Array("HTTP/1.1 503 Busy\r\nRetry-After: 5\r\n\r\n".utf8)))
        #expect(busy.retryAfter == 5)
        for delay in [-1, -Double.infinity, Double.nan] {
            let policy = RetryPolicy(retries: 3, baseDelay: delay, maxDelay: delay)
            for attempt in 1...6 {
                for error in [FetchError(.http, url: "http://x/", status: 503), busy] {
                    let waits = (0..<50).map { _ in policy.delay(after: attempt, error: error) }
                    #expect(waits.allSatisfy { $0 == 0 }, "delay \(delay), attempt \(attempt): \(Set(waits))")
                }
            }
        }
    }

    @Test func retryAfterAcceptsSecondsAndHTTPDates() {
        #expect(RetryPolicy.retryAfterSeconds("2") == 2)
        #expect(RetryPolicy.retryAfterSeconds(" 0 ") == 0)
        #expect(RetryPolicy.retryAfterSeconds("Sun, 06 Nov 1994 08:49:37 GMT", now: 784_111_767) == 10)
        #expect(RetryPolicy.retryAfterSeconds("soon") == nil)
    }
}
