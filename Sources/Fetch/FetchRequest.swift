/// One request: a GET, or (for the remote cache tier) a PUT of a body held in memory.
public struct FetchRequest: Sendable {
    public var url: String
    /// Extra request headers (`-H`), plus conditional headers for revalidation.
    public var headers: HTTPHeaders
    public var method: Method
    /// The body of a `.put`, sent with a Content-Length and no `Expect: 100-continue`.
    public var body: [UInt8]

    public enum Method: String, Sendable {
        case get = "GET"
        case put = "PUT"
    }

    public init(url: String, headers: HTTPHeaders = HTTPHeaders(), method: Method = .get, body: [UInt8] = []) {
        self.url = url
        self.headers = headers
        self.method = method
        self.body = body
    }
}

/// What a completed transfer looked like. A fetch returns a response for
/// 2xx and 304; other statuses become a `FetchError` of kind `.http`.
public struct FetchResponse: Sendable {
    /// The requested URL, with any password removed.
    public let url: String
    /// The URL that answered, after redirects (password removed).
    public let effectiveURL: String
    public let status: Int
    public let headers: HTTPHeaders
    /// Body bytes handed to the sink (0 for 304).
    public let bodyBytes: Int64
    public let attempts: Int
    public let redirects: Int
    /// "1.1", "2", …
    public let httpVersion: String
    /// Seconds for the last attempt: name lookup, connect, first byte, total.
    public let timings: Timings

    public struct Timings: Sendable {
        public let nameLookup: Double
        public let connect: Double
        public let firstByte: Double
        public let total: Double
    }
}
