import Support

/// Why a fetch failed. One type for the whole module: the `kind` is the
/// machine-readable word of SPEC §3, `description` a sentence for people.
public struct FetchError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case invalidURL = "invalid-url"
        case unsupportedScheme = "unsupported-scheme"
        case dns
        case connect
        case tls
        case timeout
        case http
        case tooLarge = "too-large"
        case redirects
        case cancelled
        case io
        case network
    }

    public let kind: Kind
    /// The requested URL, with any password removed.
    public let url: String
    /// HTTP status, for `.http`.
    public let status: Int?
    /// Response headers, for `.http` (used for `Retry-After` and negative caching).
    public let headers: HTTPHeaders?
    /// libcurl's result code and its error text, when libcurl reported the failure.
    public let curlCode: Int?
    public let curlMessage: String?
    /// Extra context: the path for `.io`, the limit for `.tooLarge`.
    public let detail: String?
    /// Attempts made, retries included.
    public internal(set) var attempts: Int
    /// The server's response broke HTTP (`.network`): `detail` says how.
    public let isMalformedResponse: Bool
    /// A request header was refused before any I/O (`HeaderProblem`): kind
    /// `.invalidURL`, the kind of a request that cannot be made as given
    /// (SPEC §3's list of kinds is fixed; nothing was sent and retrying
    /// cannot help); `detail` names the header and says why.
    public let isInvalidHeader: Bool
    /// A status line of a response arrived in the failed attempt: the server
    /// answered, however late or broken. False for a connect failure and for
    /// a timeout with not one byte of an answer (a batch gives up at once on
    /// a host that never answered: see the loader's `HostPolicy`).
    public internal(set) var responseStarted = false
    /// The server accepted the connection, then closed or reset it before
    /// any byte of an answer (libcurl's "Empty reply from server", a
    /// connection reset: kind `.network`; over https in the TLS handshake:
    /// kind `.tls`), with no proxy in the way answering instead. Treated
    /// like a refused connection, a connect error (`RetryPolicy` retries it;
    /// a batch counts it toward giving its host up). A reset after the
    /// answer began is not this.
    public internal(set) var closedBeforeAnswer = false
    /// Where the failure happened when redirects were followed first (the
    /// last URL asked for, password removed): a 404, a refused connection or
    /// a loop at another address than `url`. Nil when it failed at `url`.
    public internal(set) var effectiveURL: String?
    /// The proxy whose failure this is, as the environment named it when the
    /// attempt failed, without user name or password (`http://p:3128
    /// (http_proxy)`): one that could not be reached (kind `.connect`), whose
    /// name did not resolve (`.dns`), or that gave no answer in time
    /// (`.timeout`, before any status line or answer to a `CONNECT`). Nil
    /// when the attempt went direct, when the failure was past the proxy, or
    /// when its client was made with no proxy variable set (it then reads none).
    public internal(set) var proxy: String?

    public init(
        _ kind: Kind, url: String, status: Int? = nil, headers: HTTPHeaders? = nil,
        curlCode: Int? = nil, curlMessage: String? = nil, detail: String? = nil, attempts: Int = 1
    ) {
        self.kind = kind
        self.url = redactURL(url)
        self.status = status
        self.headers = headers
        self.curlCode = curlCode
        self.curlMessage = curlMessage
        self.detail = detail
        self.attempts = attempts
        isMalformedResponse = false
        isInvalidHeader = false
    }

    /// A response that breaks HTTP: `network`, "malformed response from the
    /// server: " and `what` was wrong.
    init(malformed what: String, url: String, curlCode: Int? = nil, curlMessage: String? = nil) {
        self.kind = .network
        self.url = redactURL(url)
        status = nil
        headers = nil
        self.curlCode = curlCode
        self.curlMessage = curlMessage
        detail = what
        attempts = 1
        isMalformedResponse = true
        isInvalidHeader = false
    }

    /// A request header that cannot be sent (`HTTPHeaders.problem`), refused
    /// before any I/O: no attempt was made. `url` is empty for a
    /// configuration checked on its own (`FetchConfiguration.validate`).
    init(header name: String, _ problem: HeaderProblem, url: String) {
        kind = .invalidURL
        self.url = redactURL(url)
        status = nil
        headers = nil
        curlCode = nil
        curlMessage = nil
        detail = "'\(String(reflecting: name).dropFirst().dropLast())': \(problem)"
        attempts = 0
        isMalformedResponse = false
        isInvalidHeader = true
    }

    /// A sentence a person understands, without the URL (callers print it beside
    /// the URL): what went wrong, then libcurl's own explanation or our detail.
    public var message: String {
        let curlSays = suffix(curlMessage ?? detail)
        switch kind {
        case .invalidURL where isInvalidHeader: return "invalid request header" + (detail.map { " " + $0 } ?? "")
        case .invalidURL: return "invalid URL" + suffix(detail ?? curlMessage)
        case .unsupportedScheme: return "unsupported scheme" + suffix(detail ?? curlMessage) + " (only http and https are allowed)"
        case .dns:
            // libcurl's own text ("Could not resolve proxy: p") says less than the variable that named it.
            if let proxy { return "could not resolve the proxy \(proxy)" }
            // libcurl's own text already says it ("Could not resolve host: x"): don't say it twice.
            if let text = curlMessage, text.lowercased().hasPrefix("could not resolve") {
                return "c" + text.dropFirst()
            }
            // A URL of a host given up on after its one lookup: the loader's sentence
            // ("host x did not resolve; not tried again in this run") says it all.
            if curlMessage == nil, let detail, !detail.isEmpty { return detail }
            return "could not resolve host" + curlSays
        case .connect:
            // libcurl names the address it failed to reach, and not that it is a proxy's.
            if let proxy { return "could not connect to the proxy \(proxy)" + curlSays }
            return "could not connect" + curlSays
        case .tls: return "TLS error" + curlSays
        case .timeout:
            if let proxy { return "no answer in time through the proxy \(proxy)" + curlSays }
            return "timed out" + curlSays
        case .http:
            let code = status ?? 0
            // `detail`: the body that followed was broken too (a note; the status stands).
            return "HTTP \(code) \(HTTPStatus.reason(code))" + (detail.map { " (\($0))" } ?? "")
        case .tooLarge: return "response too large" + suffix(detail ?? curlMessage)
        case .redirects: return "too many redirects" + curlSays
        case .cancelled: return "cancelled"
        case .io: return "I/O error" + suffix(detail ?? curlMessage)
        case .network where isMalformedResponse: return "malformed response from the server" + suffix(detail)
        case .network: return "network error" + curlSays
        }
    }

    /// "URL: message"; the message alone when there is no URL (an empty
    /// one, or a failure of the engine itself).
    public var description: String { url.isEmpty ? message : "\(url): \(message)" }

    /// The server's `Retry-After`, in seconds from now, when it sent one.
    public var retryAfter: Double? {
        headers?["Retry-After"].flatMap { RetryPolicy.retryAfterSeconds($0) }
    }

    private func suffix(_ text: String?) -> String {
        guard let text, !text.isEmpty else { return "" }
        return ": " + text
    }
}
