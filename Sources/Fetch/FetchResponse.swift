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
