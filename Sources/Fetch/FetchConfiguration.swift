/// Limits and policy for a `FetchClient`. Every default comes from `Defaults`.
public struct FetchConfiguration: Sendable {
    /// The largest body accepted, in bytes (decoded bytes for a coded body);
    /// 0 (or below) means no limit, as libcurl's CURLOPT_MAXFILESIZE_LARGE
    /// and curl's `--max-filesize 0` (and as `timeout` 0).
    public var maxSize: Int64 = Defaults.maxSize
    public var connectTimeout: Double = Defaults.connectTimeout
    public var timeout: Double = Defaults.timeout
    /// A transfer slower than `lowSpeedLimit` bytes/s for `lowSpeedTime`
    /// seconds is aborted (`.timeout`); 0, or a time beyond `Int32.max`
    /// seconds (`.infinity`), turns the check off.
    public var lowSpeedLimit: Int = Defaults.lowSpeedLimit
    public var lowSpeedTime: Double = Defaults.lowSpeedTime
    /// Seconds a body that has ended by its own structure may stall short of
    /// its `Content-Length` before the attempt fails (`.network`, not
    /// retried); 0 (or below) leaves such a stall to the low-speed abort.
    public var endedBodyStallTime: Double = Defaults.endedBodyStallTime
    /// Redirects followed (SPEC §5: 10); one more is `.redirects`. Below 0
    /// means 0 (no redirect followed), never libcurl's -1, "unlimited".
    public var maxRedirects: Int = Defaults.maxRedirects
    /// Extra attempts after a retryable failure; below 0 means 0.
    public var retries: Int = Defaults.retries
    /// Seconds of backoff (full jitter below `retryBaseDelay` × 2ⁿ⁻¹, at most
    /// `retryMaxDelay`, which also caps `Retry-After`). NaN or below 0 means 0;
    /// `.infinity` (no cap) means 31 years (`RetryPolicy.longestDelay`).
    public var retryBaseDelay: Double = Defaults.retryBaseDelay
    public var retryMaxDelay: Double = Defaults.retryMaxDelay
    /// Idle connections kept for reuse: the connection caches of the
    /// transfer loops hold twice this between them (or
    /// `Defaults.idleConnections`, if more: see `TransferLoops.connectionCache`),
    /// at least 8 each.
    public var maxConnections: Int = Defaults.jobs
    /// Connections at once to one host (CURLMOPT_MAX_HOST_CONNECTIONS; nil:
    /// no limit, but an `ImageLoader` takes nil as its `jobsPerHost`). A
    /// batch schedules at most `--jobs-per-host` transfers per listed host
    /// itself; this also bounds a redirect's target.
    public var maxHostConnections: Int?
    /// Transfers running at once on this client, over all its transfer loops;
    /// further fetches wait, in order, inside the engine and start the moment
    /// a slot frees (no hop through Swift tasks, which keeps the pipe full).
    /// Nil: no limit.
    public var maxConcurrentTransfers: Int?
    /// Threads that run transfers, each with its own libcurl multi handle and
    /// connection pool (`Defaults.transferLoops`: one per core). Values below 1
    /// mean 1, above `Defaults.maxTransferLoops` that many. A loop starts
    /// when a transfer is first placed on it (see `TransferLoops`).
    public var transferLoops: Int = Defaults.transferLoops
    /// Threads that run `FetchClient.start`'s completions off the transfer
    /// loops (`Defaults.completionWorkers`: one per core). Values below 1
    /// mean 1, above `Defaults.maxCompletionWorkers` that many. They start
    /// with the first completion (see `CompletionWorkers`).
    public var completionWorkers: Int = Defaults.completionWorkers
    /// Extra CA bundle (`--cacert`).
    public var caFile: String?
    /// The system's CAs, trusted besides `caFile`: a directory of
    /// certificates by subject hash (the default, `Defaults.systemCABundle`)
    /// or a bundle file (nil or missing: libcurl's own default CA locations).
    /// Tests point it at a private CA.
    public var systemCABundle: String? = Defaults.systemCABundle
    /// Skip TLS verification (`--insecure`).
    public var insecure = false
    /// The `User-Agent` of every request; empty: none is sent (as curl's `-A ''`).
    public var userAgent: String = Defaults.userAgent
    /// Headers added to every request (`-H`). An empty value is sent as an
    /// empty header (`Name:`, curl's `-H 'Name;'`). A name or value that
    /// cannot be sent (`HTTPHeaders.problem`: a line break, a name that is
    /// not a token) fails every request before any I/O: see `validate()`.
    public var headers = HTTPHeaders()
    /// Headers not sent at all, even those libcurl or Fetch add by default
    /// (`Accept`, `User-Agent`, `Accept-Encoding`): curl's `-H 'Name:'`. A
    /// name that `headers` or the request also holds is sent with that value.
    public var removedHeaders: [String] = []
    /// Counts body bytes as they arrive, for a progress display. Nil: not counted.
    public var progress: TransferProgress?
    /// Whether a variable of the environment may name a proxy (`ProxyEnvironment`), as
    /// `FetchClient` read it once for all of its transfers. True until then: libcurl reads them.
    var environmentNamesProxy = true
    /// Sign every request with AWS Signature V4 (CURLOPT_AWS_SIGV4, e.g.
    /// "aws:amz:us-east-1:s3") using `userPassword` as access key and secret.
    public var awsSigV4: String?
    /// "user:password" for every request (CURLOPT_USERPWD).
    public var userPassword: String?
    /// Log HTTP detail through libcurl (debugging only).
    public var verboseCurl = false

    public init() {}

    /// `maxSize` as the transfers apply it: `Int64.max` for no limit.
    var bodyLimit: Int64 { maxSize > 0 ? maxSize : .max }

    /// Refuses, before any I/O, a configuration whose headers (`headers`,
    /// `removedHeaders`, `userAgent`) cannot be sent as given
    /// (`HTTPHeaders.problem`): a `FetchError` of kind `.invalidURL` with an
    /// empty `url`, whose message names the header and says why. A client
    /// made with such a configuration fails each request with that error
    /// (naming the request's URL), so call this where the configuration is
    /// made, to refuse it once.
    public func validate() throws(FetchError) {
        if let (name, problem) = headerProblem { throw FetchError(header: name, problem, url: "") }
    }

    /// The first header of this configuration that cannot be sent, and why.
    var headerProblem: (name: String, problem: HeaderProblem)? {
        if let found = headers.firstProblem() { return found }
        for name in removedHeaders {
            if let problem = HTTPHeaders.problem(name: name, value: "") { return (name, problem) }
        }
        if let problem = HTTPHeaders.problem(name: "User-Agent", value: userAgent) { return ("User-Agent", problem) }
        return nil
    }
}
