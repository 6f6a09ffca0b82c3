/// Everything needed to run one attempt; a plain value handed to the loop thread.
struct TransferSpec: Sendable {
    let url: String
    let headerLines: [String]
    let maxSize: Int64
    /// Redirects this attempt may still follow (CURLOPT_MAXREDIRS).
    let maxRedirects: Int
    let sink: BodySink
    var progress: TransferProgress?
    var method: FetchRequest.Method = .get
    var body: [UInt8] = []
    var bodyFile: FetchRequest.BodyFile?
    /// Hears, on the loop thread, when the connection is ready and when the
    /// response begins (`FetchAttemptGate.connected`, `.responding`).
    var gate: (any FetchAttemptGate)?
    /// A large body's writes go to a completion worker (`StreamHandoff`), not
    /// to the sink on the loop thread (`FetchClient.start`'s fetches).
    var streamsOnWorker = false
    /// Whether a retryable status (408, 429, 5xx) in answer to this attempt is
    /// followed by another attempt (the fetch has retries left): its connection
    /// is then kept for that attempt (`CurlTransfer.keepConnectionForRetry`).
    /// Set by `FetchAttempts` for each attempt.
    var mayRetry = false
    /// What the loops need of `url`, when read from it already (`FetchClient.prepare`); nil: read by the transfer.
    var origin: TransferOrigin?
}
