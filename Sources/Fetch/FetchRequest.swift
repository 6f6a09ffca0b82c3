/// One request: a GET, or (for the remote cache tier) a PUT of `body`
/// followed by `bodyFile`, streamed (memory stays flat however large the file).
public struct FetchRequest: Sendable {
    public var url: String
    /// Extra request headers (`-H`), plus conditional headers for revalidation.
    public var headers: HTTPHeaders
    public var method: Method
    /// The start of a `.put`'s body, sent with a Content-Length.
    public var body: [UInt8]
    /// The rest of a `.put`'s body: a file read as it is sent.
    /// (`Optional<…>`, not `?`, here and for `gate`: see `init`.)
    public var bodyFile: Optional<BodyFile>
    /// Who decides the retries that concern the whole host (see
    /// `FetchAttemptGate`); nil: the configuration's `RetryPolicy` alone.
    public var gate: Optional<any FetchAttemptGate>

    /// A file sent after `body`. It must still be the file of this inode and
    /// length when the transfer opens it (a cache entry replaced meanwhile is
    /// not sent as another entry's body): else the transfer fails with `.io`.
    public struct BodyFile: Sendable {
        public let path: String
        public let length: Int64
        public let inode: UInt64
        public init(path: String, length: Int64, inode: UInt64) {
            self.path = path
            self.length = length
            self.inode = inode
        }
    }

    public enum Method: String, Sendable {
        case get = "GET"
        case put = "PUT"
    }

    public init(url: String, headers: HTTPHeaders = HTTPHeaders(), method: Method = .get, body: [UInt8] = [],
                bodyFile: BodyFile? = nil, gate: (any FetchAttemptGate)? = nil) {
        // Each field is set once, here: a `var` spelled `T?` starts as nil,
        // and a field set twice (the second store frees the first value)
        // made the optimizer copy the whole request out of the init and
        // destroy the one it built (as `CacheMetadata.init` did).
        self.url = url
        self.headers = headers
        self.method = method
        self.body = body
        self.bodyFile = bodyFile
        self.gate = gate
    }
}
