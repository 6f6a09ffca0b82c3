/// Lets the owner of many fetches take the retry decisions that concern a
/// whole host rather than one URL (the loader's batch: a 429 pauses the
/// host, not the URL; a host given up on is not tried again). Without a
/// gate a fetch retries by its own `RetryPolicy`, as a single download should.
///
/// Called on the awaiting task, after every attempt but a cancelled one.
///
/// A class (a gate keeps what it was told, for the whole fetch): a request,
/// its transfer and its attempts each hold it, and are copied on the transfer
/// loop, where a class-bound existential is one reference to retain, not an
/// existential container copied through its value witnesses.
public protocol FetchAttemptGate: AnyObject, Sendable {
    /// An attempt reached its host: the name resolved and the TCP connection
    /// is made (over https before the TLS handshake, and again when the
    /// request is about to go). Called on the transfer thread, possibly more
    /// than once per attempt: it must be quick and must never wait.
    func connected()

    /// A status line of the attempt's response came in (the server answers,
    /// whatever the status and however long its body takes), with its
    /// `status` code. Called on the transfer thread, once per status line:
    /// quick, never waits.
    func responding(status: Int)

    /// Whether the attempt about to start leaves its connection open for
    /// reuse when it ends: false when the owner has nothing more queued for
    /// the host, so the connection is closed rather than kept idle for
    /// nobody (libcurl 7.88 walks its whole connection cache at the end of
    /// every transfer, and evicts only when the cache is full: connections
    /// no URL will reuse cost every transfer). An answer the fetch will retry
    /// (408, 429, 5xx with retries left) keeps its connection all the same:
    /// the retry is the host's next request. Called on the transfer
    /// thread before each attempt: quick, never waits.
    func keepsConnection() -> Bool

    /// The attempt got the response the fetch returns (2xx or 304).
    func answered(status: Int)

    /// The attempt failed with `error`. May suspend (while the host is
    /// paused, holding no slot) before it says what to do.
    func failed(_ error: FetchError) async -> FetchRetryVerdict

    /// Whether a retry the policy allowed (`.usePolicy`) still goes out,
    /// asked after its backoff, before the attempt: false when the owner
    /// no longer wants it (its host was given up on while it waited); the
    /// fetch then fails with the last attempt's error. Called on the
    /// awaiting task: quick, never waits.
    func mayRetry() -> Bool

    /// Why the owner no longer wants any attempt to this fetch's host (it
    /// gave the host up): the kind and message the attempt fails with; nil
    /// while it still does. Asked on the transfer thread as each attempt
    /// starts there. An attempt the owner let go (a retry past `mayRetry`,
    /// a URL it started) may reach its loop only after the loop ended the
    /// host's unanswered attempts (`FetchClient.endUnansweredAttempts`); it
    /// then fails at once, instead of running its own timeout. Quick, never waits.
    func refusal() -> (kind: FetchError.Kind, detail: String)?
}

/// What a fetch does after a failed attempt, as its gate decides.
public enum FetchRetryVerdict: Sendable, Equatable {
    /// Whatever the fetch's own `RetryPolicy` says (the URL's `--retries`,
    /// with backoff).
    case usePolicy
    /// Try again now, as one of the fetch's retries (with none left the
    /// fetch fails instead): the gate has waited out the host's pause (in
    /// place of the policy's backoff) and given the URL a slot again.
    case tryAgain
    /// Fail now with this attempt's error (the host was given up on, or has
    /// pushed the URL back as often as it may).
    case stop
    /// Fail now as cancelled (the batch was cancelled while the URL waited).
    case cancelled
}

extension FetchAttemptGate {
    /// By default every connection is kept for reuse (libcurl's own behaviour).
    public func keepsConnection() -> Bool { true }

    /// By default a retry the policy allows always goes out.
    public func mayRetry() -> Bool { true }

    /// By default every attempt goes out.
    public func refusal() -> (kind: FetchError.Kind, detail: String)? { nil }
}
