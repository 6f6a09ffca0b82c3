import DiskCache
import Fetch

/// Why a URL ended in `failure`. One type for the loader; `kind` is the word
/// of SPEC §3, `message` a sentence for people.
public struct LoadError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case invalidURL = "invalid-url"
        case unsupportedScheme = "unsupported-scheme"
        case dns, connect, tls, timeout, http
        case tooLarge = "too-large"
        case notAnImage = "not-an-image"
        case redirects, cancelled, io, network
    }

    public let kind: Kind
    public let message: String
    /// The response's HTTP status where it is the failure's subject: the
    /// error status of `http`, the status of a body that was `not-an-image`.
    /// Nil for every other kind: an `io` failure after a `200` is the
    /// machine's problem, not the server's (docs/output.md, `error.status`).
    public let status: Int?
    public let attempts: Int
    /// `cache` when a remembered error status was replayed without the network.
    public let source: Source?
    /// Where the load failed when it followed redirects first (JSON
    /// `effectiveUrl`, password removed): the address that answered 404,
    /// refused the connection or sent what is not an image. Nil when it
    /// failed at the URL asked for.
    public let effectiveURL: String?

    public init(kind: Kind, message: String, status: Int? = nil, attempts: Int = 0, source: Source? = nil,
                effectiveURL: String? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
        self.attempts = attempts
        self.source = source
        self.effectiveURL = effectiveURL
    }

    /// `error`, its message followed by `addendum` when one is given.
    init(_ error: FetchError, addendum: String? = nil) {
        self.init(kind: Kind(rawValue: error.kind.rawValue) ?? .network, message: error.message + (addendum ?? ""),
                  status: error.status, attempts: error.attempts, effectiveURL: error.effectiveURL)
    }

    init(_ error: DiskCacheError, attempts: Int = 0) {
        self.init(kind: error.kind == .invalidURL ? .invalidURL : .io, message: error.kind == .invalidURL
                  ? "invalid URL: " + error.message : error.message, attempts: attempts)
    }

    public var description: String { message }
}
