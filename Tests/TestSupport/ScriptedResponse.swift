/// One HTTP request as received by `ScriptedServer`.
public struct RecordedRequest: Sendable {
    /// Request method, e.g. "GET".
    public let method: String
    /// The request target exactly as sent, including any query string ("/a.png?x=1").
    public let path: String
    /// Header fields in the order received.
    public let headers: [(name: String, value: String)]
    /// The request body (empty for GET). Bodies are read fully (Content-Length or chunked).
    public let body: [UInt8]
    /// HTTP version string from the request line, e.g. "HTTP/1.1".
    public let version: String
    /// 1-based number of the TCP connection this request arrived on (in accept order).
    public let connectionID: Int
    /// 0-based index of this request on its connection (> 0 means the connection was reused).
    public let indexOnConnection: Int

    public init(
        method: String, path: String, headers: [(name: String, value: String)], body: [UInt8] = [],
        version: String = "HTTP/1.1", connectionID: Int = 0, indexOnConnection: Int = 0
    ) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.version = version
        self.connectionID = connectionID
        self.indexOnConnection = indexOnConnection
    }

    /// The path without the query string ("/a.png" for "/a.png?x=1").
    public var pathWithoutQuery: String {
        if let q = path.firstIndex(of: "?") { return String(path[..<q]) }
        return path
    }

    /// The query string without "?", or nil when there is none.
    public var query: String? {
        if let q = path.firstIndex(of: "?") { return String(path[path.index(after: q)...]) }
        return nil
    }

    /// First value of a header, matched case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// All values of a header, matched case-insensitively.
    public func headerValues(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }
}

/// What `ScriptedServer` answers to one request, including fault injection knobs.
public struct ScriptedResponse: Sendable {
    /// Status code, e.g. 200.
    public var status: Int
    /// Reason phrase; nil = standard phrase for `status`.
    public var reason: String?
    /// Extra header fields (Content-Type, ETag, Cache-Control, Location...).
    /// If a "Content-Length" is given here it is sent as is and the server does not add its own.
    /// A "Date" header is added automatically unless one is given here.
    public var headers: [(String, String)]
    /// Body bytes (ignored when `generatedBodyLength` is set).
    public var body: [UInt8]
    /// Seconds to wait before sending anything (wakes early when the server stops).
    public var delayBeforeHeaders: Double = 0
    /// Send the body in chunks of `chunk` bytes, sleeping `interval` seconds between chunks.
    public var trickle: (chunk: Int, interval: Double)? = nil
    /// Content-Length to announce instead of the real body length (a lie). The connection is
    /// closed after the body has been sent.
    public var declaredLength: Int? = nil
    /// Seconds to hold the connection open, silent, after the body was sent (wakes early when
    /// the server stops): with a `declaredLength` above the body, a server that stalls short
    /// of its Content-Length instead of closing.
    public var stallAfterBody: Double = 0
    /// Stream this many bytes of generated data (see `generatedByte(at:)`) instead of `body`,
    /// without holding them in memory. Content-Length = this unless `declaredLength` is set.
    public var generatedBodyLength: Int? = nil
    /// Send no Content-Length: the body is delimited by closing the connection ("Connection: close").
    public var omitContentLength = false
    /// Send the status line and headers, then drop the connection without any body.
    public var closeAfterHeaders = false
    /// Send the headers and this many body bytes, then drop the connection (truncated body,
    /// Content-Length as usual). nil = send the whole body.
    public var closeAfterBodyBytes: Int? = nil
    /// Close the connection after this response even if the client wants keep-alive
    /// (adds "Connection: close").
    public var closeConnection = false
    /// Send exactly these bytes instead of a response built from the fields above (status
    /// line, headers and body included), then close the connection: for malformed responses.
    public var raw: [UInt8]? = nil
    /// Keep the connection open after this response (no "Connection: close"), then read the
    /// next request on it and close the connection without answering: a server that closes
    /// idle keep-alive connections just as the client reuses them.
    public var dropNextRequest = false
    /// Read the request, then reset the connection (RST: SO_LINGER 0) without a byte of an
    /// answer: a host that accepts connections and drops them. (`rawBytes([])` closes instead:
    /// an empty reply.)
    public var resetWithoutAnswer = false

    public init(status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.reason = nil
        self.headers = headers
        self.body = body
    }

    /// 200 with the given body and Content-Type.
    public static func ok(
        _ body: [UInt8], contentType: String = "image/png", headers: [(String, String)] = []
    ) -> ScriptedResponse {
        ScriptedResponse(status: 200, headers: [("Content-Type", contentType)] + headers, body: body)
    }

    /// Any status with an optional text body (sent as text/plain when non-empty).
    public static func status(
        _ code: Int, headers: [(String, String)] = [], body: String = ""
    ) -> ScriptedResponse {
        var all = headers
        if !body.isEmpty && !all.contains(where: { $0.0.lowercased() == "content-type" }) {
            all.insert(("Content-Type", "text/plain; charset=utf-8"), at: 0)
        }
        return ScriptedResponse(status: code, headers: all, body: Array(body.utf8))
    }

    /// A redirect (302 by default) to `location` (absolute URL or path).
    public static func redirect(to location: String, status: Int = 302) -> ScriptedResponse {
        ScriptedResponse(status: status, headers: [("Location", location)], body: [])
    }

    /// 304 Not Modified with optional extra headers (e.g. ETag, Cache-Control).
    public static func notModified(headers: [(String, String)] = []) -> ScriptedResponse {
        ScriptedResponse(status: 304, headers: headers, body: [])
    }

    /// Exactly `bytes` on the wire, then the connection closes.
    public static func rawBytes(_ bytes: [UInt8]) -> ScriptedResponse {
        var response = ScriptedResponse()
        response.raw = bytes
        return response
    }

    /// Exactly `text` (UTF-8) on the wire, then the connection closes.
    public static func rawText(_ text: String) -> ScriptedResponse {
        rawBytes(Array(text.utf8))
    }

    /// Reads the request, then resets the connection without answering (`resetWithoutAnswer`).
    public static var reset: ScriptedResponse {
        var response = ScriptedResponse()
        response.resetWithoutAnswer = true
        return response
    }

    /// Returns a copy with `delayBeforeHeaders` set.
    public func delayed(_ seconds: Double) -> ScriptedResponse {
        var copy = self
        copy.delayBeforeHeaders = seconds
        return copy
    }

    /// Returns a copy with `trickle` set.
    public func trickled(chunk: Int, interval: Double) -> ScriptedResponse {
        var copy = self
        copy.trickle = (chunk, interval)
        return copy
    }

    /// The value of the generated body at byte `offset` (a repeating 0,1,...,250 pattern).
    public static func generatedByte(at offset: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: offset % generatedPeriod)
    }

    /// `count` bytes of the generated body starting at `offset`, for byte-exact checks.
    public static func generatedBytes(count: Int, offset: Int = 0) -> [UInt8] {
        (0..<count).map { generatedByte(at: offset + $0) }
    }

    static let generatedPeriod = 251
    /// Chunk size used to stream generated bodies (a multiple of the period).
    static let generatedChunk = generatedPeriod * 256
    /// Pattern long enough that any chunk can be cut out of it starting at offset % period.
    static let generatedPattern: [UInt8] =
        (0..<(generatedChunk + generatedPeriod)).map { UInt8(truncatingIfNeeded: $0 % generatedPeriod) }

    /// Standard reason phrase for a status code.
    public static func standardReason(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 203: return "Non-Authoritative Information"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 300: return "Multiple Choices"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 410: return "Gone"
        case 413: return "Content Too Large"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default:
            switch status {
            case 100..<200: return "Informational"
            case 200..<300: return "Success"
            case 300..<400: return "Redirection"
            case 400..<500: return "Client Error"
            default: return "Server Error"
            }
        }
    }
}
