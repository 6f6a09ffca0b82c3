import Support

/// One fetch's attempts as a state machine with no clock, no threads and no
/// I/O: after each attempt's outcome it says what to do next, and the owner
/// does it (`FetchClient.fetch`'s loop on a Swift task, or `FetchClient.start`'s
/// callback on the transfer loop's thread, which hands a first answer to a
/// completion worker and anything else to a Swift task). One copy of the rules: retries by the
/// `RetryPolicy` or the gate's verdict, redirect chains resumed after a
/// connection died, and the attempt counts a response reports.
struct FetchAttempts: Sendable {
    enum Action: Sendable {
        /// Run `spec` after `delay` seconds (0: now); reset the sink first when `resetSink`.
        case attempt(TransferSpec, resetSink: Bool, delay: Double)
        /// The attempt answered 2xx or 304: tell the gate, complete the body, return the response.
        case deliver(AttemptResponse, attempts: Int, redirectsBefore: Int, resumedAt: String)
        /// The attempt failed: the gate says what to do (`decide`); without a gate, `.usePolicy`.
        case askGate(FetchError)
        /// The fetch fails with this error.
        case fail(FetchError)
    }

    let url: String
    /// The request's gate (`firstSpec.gate`, read without copying the spec).
    let gate: (any FetchAttemptGate)?
    private let policy: RetryPolicy
    private let maxRedirects: Int
    /// The first attempt's spec; its header lines are the request's (a resumed redirect chain rewrites them per hop).
    private let firstSpec: TransferSpec
    /// The URL the current attempt starts at: the request's, or the hop a resumed redirect chain went on from.
    /// Only its URL is kept of the attempt's spec (a copy of the attempts then holds one spec, not two:
    /// it is copied into `FetchClient.start`'s callback, on the transfer loop, per fetch).
    private var resumedAt: String
    private var redirectsBefore = 0
    /// Attempts made, as reported (a resumed redirect chain is not a new
    /// attempt); every one after the first is a retry, the gate's included.
    private(set) var attempt = 0
    /// The error of the attempt the next one retries by the policy
    /// (`.usePolicy`): the fetch's error if the gate then refuses it (`mayRetry`).
    private(set) var retrying: FetchError?

    init(url: String, firstSpec: TransferSpec, policy: RetryPolicy, maxRedirects: Int) {
        self.url = url
        gate = firstSpec.gate
        self.firstSpec = firstSpec
        self.policy = policy
        self.maxRedirects = maxRedirects
        resumedAt = firstSpec.url
    }

    /// The first attempt.
    func start() -> Action { .attempt(firstAttempt(), resetSink: false, delay: 0) }

    /// The first attempt's spec (`start`'s), handed out alone: bound out of the action, it was copied
    /// once more on its way into its transfer (`FetchClient.start`, per fetch).
    func firstAttempt() -> TransferSpec { attempting(firstSpec) }

    /// `spec` as the next attempt runs it: whether a retryable answer to it
    /// will be retried (that attempt's connection is then kept for the retry).
    private func attempting(_ spec: TransferSpec) -> TransferSpec {
        var spec = spec
        spec.mayRetry = attempt < policy.retries
        return spec
    }

    /// What follows an attempt (`attempt` counts it); a cancelled task's
    /// attempt that never ran is `.failure` of kind `.cancelled`. An attempt
    /// the gate refused at its loop was not made: the error counts only the
    /// attempts before it (0 when it was the first), as a URL of a host given
    /// up on before it started does.
    mutating func next(after outcome: AttemptOutcome) -> Action {
        if case .refused(var error) = outcome {
            retrying = nil
            error.attempts = attempt
            return .askGate(error)
        }
        if let delivery = delivery(after: outcome) {
            attempt += 1
            retrying = nil
            return .deliver(delivery.response, attempts: delivery.attempts, redirectsBefore: delivery.redirectsBefore,
                            resumedAt: delivery.resumedAt)
        }
        attempt += 1
        retrying = nil
        var error: FetchError
        switch outcome {
        case .response(let response):
            error = FetchError(.http, url: url, status: response.status,
                               headers: HTTPHeaders(parsing: response.rawHeaders),
                               detail: response.bodyProblem.map { "the body was also malformed: " + $0 })
            error.effectiveURL = response.redirectedURL.map(redactURL)
        case .interrupted(_, let next, let redirects) where redirectsBefore + redirects <= maxRedirects:
            // A redirect chain on a server that closes idle connections: go on
            // from the hop that died, on a fresh connection, with what is left
            // of the redirect budget (so a loop is still `redirects` after 10 hops).
            // This is not a retry: each resume follows at least one more hop.
            redirectsBefore += redirects
            let spec = TransferSpec(following: firstSpec, to: next,
                                    headerLines: FetchClient.linesForRedirect(firstSpec.headerLines, from: url, to: next),
                                    maxRedirects: maxRedirects - redirectsBefore)
            resumedAt = next
            attempt -= 1
            return .attempt(attempting(spec), resetSink: true, delay: 0)
        case .interrupted(let failure, _, _), .failure(let failure), .refused(let failure):
            error = failure
        }
        if error.kind == .redirects && redirectsBefore > 0 {
            // libcurl counted only the hops since the chain was resumed.
            let reached = error.effectiveURL
            error = FetchError(.redirects, url: url, curlCode: error.curlCode,
                               curlMessage: "Maximum (\(maxRedirects)) redirects followed")
            error.effectiveURL = reached
        }
        if error.effectiveURL == nil && resumedAt != firstSpec.url {
            error.effectiveURL = redactURL(resumedAt)   // a resumed chain failed at the hop it went on from
        }
        error.attempts = attempt
        return error.kind == .cancelled ? .fail(error) : .askGate(error)
    }

    /// What `next(after:)` says for an outcome the fetch returns (a 2xx or
    /// 304 response), without changing the state: for an owner whose fetch
    /// ends there (`FetchClient.start`'s callback, on the loop thread), which
    /// then need not copy the attempts (two `TransferSpec`s) to change them.
    /// nil for any other outcome.
    func delivery(after outcome: AttemptOutcome)
        -> (response: AttemptResponse, attempts: Int, redirectsBefore: Int, resumedAt: String)? {
        guard case .response(let response) = outcome, (200..<300).contains(response.status) || response.status == 304
        else { return nil }
        return (response, attempt + 1, redirectsBefore, resumedAt)
    }

    /// What follows the gate's verdict on a failed attempt's `error`.
    mutating func decide(_ verdict: FetchRetryVerdict, for error: FetchError) -> Action {
        var delay = 0.0
        retrying = nil
        switch verdict {
        case .usePolicy:
            guard attempt <= policy.retries, policy.isRetryable(error) else { return .fail(error) }
            delay = policy.delay(after: attempt, error: error)
            retrying = error
        case .tryAgain:
            // The gate waited for the host (a 429 or 503) and counts it as a retry: it waits only
            // while one is left, so this guard holds unless a gate keeps its own count.
            guard attempt <= policy.retries else { return .fail(error) }
        case .stop:
            return .fail(error)
        case .cancelled:
            return .fail(cancelled)
        }
        resumedAt = firstSpec.url
        redirectsBefore = 0
        return .attempt(attempting(firstSpec), resetSink: true, delay: delay)
    }

    /// The error of a fetch cancelled now.
    var cancelled: FetchError { FetchError(.cancelled, url: url, attempts: attempt) }

    /// `error` as the fetch's when it came before the next attempt could run
    /// (its transfer could not be placed, or the fetch was cancelled first).
    func beforeAttempt(_ error: FetchError) -> FetchError { Self.beforeAttempt(error, url: url, made: attempt) }

    /// `beforeAttempt` of the attempts to `url` after `made` of them, for an owner that gave its attempts away.
    static func beforeAttempt(_ error: FetchError, url: String, made: Int) -> FetchError {
        FetchError(error.kind, url: url, curlCode: error.curlCode, curlMessage: error.curlMessage, detail: error.detail,
                   attempts: made + 1)
    }

    /// The error of a sink that could not start over.
    func resetFailed(_ error: Error) -> FetchError {
        FetchError(.io, url: url, detail: (error as? FetchError)?.detail ?? "\(error)", attempts: attempt)
    }
}

extension TransferSpec {
    /// `first`'s request resumed at `url`, a later hop of its redirect chain.
    init(following first: TransferSpec, to url: String, headerLines: [String], maxRedirects: Int) {
        self.init(url: url, headerLines: headerLines, maxSize: first.maxSize, maxRedirects: maxRedirects, sink: first.sink,
                  progress: first.progress, method: first.method, body: first.body, bodyFile: first.bodyFile,
                  gate: first.gate)
    }
}
