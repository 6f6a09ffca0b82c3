@testable import Fetch
import Testing

/// The attempts' state machine alone (no I/O): what follows each outcome,
/// and the attempt counts a caller sees.
@Suite struct FetchAttemptsTests {
    final class NullSink: BodySink, @unchecked Sendable {
        func write(_ bytes: UnsafeRawBufferPointer) throws {}
        func reset() throws {}
    }

    static let url = "http://127.0.0.1:1/a.png"

    static func attempts(retries: Int, maxRedirects: Int = 10) -> FetchAttempts {
        let spec = TransferSpec(url: url, headerLines: ["Authorization: secret"], maxSize: 1 << 20,
                                maxRedirects: maxRedirects, sink: NullSink())
        return FetchAttempts(url: url, firstSpec: spec,
                             policy: RetryPolicy(retries: retries, baseDelay: 0.5, maxDelay: 1), maxRedirects: maxRedirects)
    }

    static func response(_ status: Int) -> AttemptOutcome {
        .response(AttemptResponse(status: status, rawHeaders: [], bufferedBody: [], bodyBytes: 0, redirectedURL: nil,
                                  redirects: 0, httpVersion: "1.1",
                                  timings: .init(nameLookup: 0, connect: 0, firstByte: 0, total: 0)))
    }

    @Test func aFirstAnswerIsDeliveredAsTheFirstAttempt() {
        var attempts = Self.attempts(retries: 2)
        guard case .attempt(let spec, let reset, let delay) = attempts.start() else { Issue.record("no first attempt"); return }
        #expect(spec.url == Self.url && !reset && delay == 0)
        guard case .deliver(_, let count, let before, let resumedAt) = attempts.next(after: Self.response(200)) else {
            Issue.record("a 200 is not delivered")
            return
        }
        #expect(count == 1 && before == 0 && resumedAt == Self.url)
    }

    @Test func aRetryableStatusAsksTheGateThenWaitsAndRetriesUntilTheRetriesAreUsedUp() {
        var attempts = Self.attempts(retries: 1)
        guard case .askGate(let first) = attempts.next(after: Self.response(503)) else { Issue.record("503: no question"); return }
        #expect(first.status == 503 && first.attempts == 1)
        guard case .attempt(_, let reset, let delay) = attempts.decide(.usePolicy, for: first) else {
            Issue.record("503 with a retry left: no retry")
            return
        }
        #expect(reset, "a retry starts the body over")
        #expect(delay >= 0 && delay <= 0.5, "backoff with full jitter below the base delay: \(delay)")
        guard case .askGate(let second) = attempts.next(after: Self.response(503)) else { Issue.record("no question"); return }
        #expect(second.attempts == 2)
        guard case .fail(let error) = attempts.decide(.usePolicy, for: second) else { Issue.record("retried past --retries"); return }
        #expect(error.attempts == 2 && error.status == 503)
    }

    /// Each attempt says whether a retryable answer to it will be retried (its
    /// connection is then kept for the retry): not the last one `--retries` allows,
    /// and an attempt the gate tried again used a retry up (SPEC §5: `--retries N` is N retries).
    @Test func eachAttemptSaysWhetherARetryableAnswerWillBeRetried() {
        var attempts = Self.attempts(retries: 2)
        guard case .attempt(let first, _, _) = attempts.start() else { Issue.record("no first attempt"); return }
        #expect(first.mayRetry)
        guard case .askGate(let pushed) = attempts.next(after: Self.response(429)),
              case .attempt(let again, _, _) = attempts.decide(.tryAgain, for: pushed) else { Issue.record("no attempt"); return }
        #expect(again.mayRetry, "one retry of two used")
        guard case .askGate(let failed) = attempts.next(after: Self.response(500)),
              case .attempt(let last, _, _) = attempts.decide(.usePolicy, for: failed) else { Issue.record("no retry"); return }
        #expect(!last.mayRetry, "the retry was the last attempt --retries 2 allows")
        let none = Self.attempts(retries: 0)
        guard case .attempt(let only, _, _) = none.start() else { Issue.record("no first attempt"); return }
        #expect(!only.mayRetry)
    }

    @Test func aFinalStatusFailsAtOnceWhatever() {
        var attempts = Self.attempts(retries: 3)
        guard case .askGate(let error) = attempts.next(after: Self.response(404)) else { Issue.record("404: no question"); return }
        guard case .fail = attempts.decide(.usePolicy, for: error) else { Issue.record("a 404 was retried"); return }
    }

    @Test func theGatesTryAgainUsesARetryAndItsStopAndCancelEndTheFetch() {
        var attempts = Self.attempts(retries: 1)
        guard case .askGate(let pushed) = attempts.next(after: Self.response(429)) else { Issue.record("no question"); return }
        guard case .attempt(_, true, 0) = attempts.decide(.tryAgain, for: pushed) else { Issue.record("tryAgain: no attempt now"); return }
        guard case .askGate(let again) = attempts.next(after: Self.response(429)) else { Issue.record("no question"); return }
        #expect(again.attempts == 2)
        var spent = attempts
        guard case .fail(let over) = spent.decide(.tryAgain, for: again) else { Issue.record("a third attempt for --retries 1"); return }
        #expect(over.status == 429 && over.attempts == 2)
        guard case .fail(let stopped) = attempts.decide(.stop, for: again) else { Issue.record("stop went on"); return }
        #expect(stopped.status == 429)
        guard case .fail(let cancelled) = attempts.decide(.cancelled, for: again) else { Issue.record("cancelled went on"); return }
        #expect(cancelled.kind == .cancelled && cancelled.attempts == 2)
    }

    @Test func aBrokenRedirectChainGoesOnFromItsLastHopWithoutCountingAnAttempt() {
        var attempts = Self.attempts(retries: 0, maxRedirects: 3)
        let hop = "http://127.0.0.2:1/b.png"
        let died = FetchError(.network, url: Self.url)
        guard case .attempt(let spec, true, 0) = attempts.next(after: .interrupted(died, url: hop, redirects: 2)) else {
            Issue.record("the chain was not resumed")
            return
        }
        #expect(spec.url == hop)
        #expect(spec.maxRedirects == 1, "what is left of the redirect budget")
        #expect(spec.headerLines.isEmpty, "no Authorization to another host")
        guard case .deliver(_, 1, 2, hop) = attempts.next(after: Self.response(200)) else {
            Issue.record("the resumed chain's answer is not the first attempt's, after 2 redirects, at the hop")
            return
        }
        var over = Self.attempts(retries: 0, maxRedirects: 3)
        guard case .askGate(let error) = over.next(after: .interrupted(died, url: hop, redirects: 4)) else {
            Issue.record("a chain past its budget went on")
            return
        }
        #expect(error.kind == .network)
    }

    @Test func aTaskCancelledBeforeAnAttemptFailsCancelledWithoutAskingTheGate() {
        var attempts = Self.attempts(retries: 3)
        guard case .fail(let error) = attempts.next(after: .failure(FetchError(.cancelled, url: Self.url))) else {
            Issue.record("a cancelled attempt went on")
            return
        }
        #expect(error.kind == .cancelled && error.attempts == 1)
    }
}
