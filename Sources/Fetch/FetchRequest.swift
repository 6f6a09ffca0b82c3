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
    public var bodyFile: BodyFile?
    /// Who decides the retries that concern the whole host (see
    /// `FetchAttemptGate`); nil: the configuration's `RetryPolicy` alone.
    public var gate: (any FetchAttemptGate)?

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
        self.url = url
        self.headers = headers
        self.method = method
        self.body = body
        self.bodyFile = bodyFile
        self.gate = gate
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
    /// The response's header fields. A 304's are kept as the block libcurl
    /// handed over and parsed where they are read (its completion's worker,
    /// merging them into the record), not on the transfer loop.
    public var headers: HTTPHeaders {
        switch headerFields {
        case .parsed(let headers): headers
        case .block(let block): HTTPHeaders(parsing: block)
        }
    }
    let headerFields: HeaderFields
    /// Body bytes handed to the sink (0 for 304).
    public let bodyBytes: Int64
    public let attempts: Int
    public let redirects: Int
    /// "1.1", "2", …
    public let httpVersion: String
    /// Seconds for the last attempt: name lookup, connect, first byte, total.
    public let timings: Timings

    /// `headers`, parsed or as their block.
    enum HeaderFields: Sendable {
        case parsed(HTTPHeaders)
        case block([UInt8])
    }

    /// `body` of the first value of `name` (ASCII), as `headers[name]` reads
    /// it, as its bytes: read in the block without parsing it (a 304's `ETag`).
    public func withFirstHeaderValue<R>(_ name: StaticString, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        switch headerFields {
        case .parsed(let headers):
            guard var value = headers["\(name)"] else { return body(nil) }
            return value.withUTF8 { body($0) }
        case .block(let block): return HTTPHeaders.withFirstValue(of: name, in: block, body)
        }
    }

    public struct Timings: Sendable {
        public let nameLookup: Double
        public let connect: Double
        public let firstByte: Double
        public let total: Double
    }
}
