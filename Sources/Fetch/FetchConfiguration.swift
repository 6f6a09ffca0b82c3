/// Limits and policy for a `FetchClient`. Every default comes from `Defaults`.
public struct FetchConfiguration: Sendable {
    public var maxSize: Int64 = Defaults.maxSize
    public var connectTimeout: Double = Defaults.connectTimeout
    public var timeout: Double = Defaults.timeout
    public var lowSpeedLimit: Int = Defaults.lowSpeedLimit
    public var lowSpeedTime: Double = Defaults.lowSpeedTime
    public var maxRedirects: Int = Defaults.maxRedirects
    public var retries: Int = Defaults.retries
    public var retryBaseDelay: Double = Defaults.retryBaseDelay
    public var retryMaxDelay: Double = Defaults.retryMaxDelay
    /// Upper bound on connections the multi handle keeps open at once.
    public var maxConnections: Int = Defaults.jobs
    /// Extra CA bundle (`--cacert`).
    public var caFile: String?
    /// Skip TLS verification (`--insecure`).
    public var insecure = false
    public var userAgent: String = Defaults.userAgent
    /// Headers added to every request (`-H`).
    public var headers = HTTPHeaders()
    /// Log HTTP detail through libcurl (debugging only).
    public var verboseCurl = false

    public init() {}
}
