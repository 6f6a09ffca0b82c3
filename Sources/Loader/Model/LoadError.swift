import DiskCache
import Fetch

/// Why a URL ended in `failure`, or why a run cannot start (a list named by
/// `--input` that cannot be read, an `--output-dir` that cannot be used, a
/// `-H` line that is not a header). One type for the loader; `kind` is the
/// word of SPEC §3, `message` a sentence for people.
public struct LoadError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case invalidURL = "invalid-url"
        case unsupportedScheme = "unsupported-scheme"
        case dns, connect, tls, timeout, http
        case tooLarge = "too-large"
        case notAnImage = "not-an-image"
        case redirects, cancelled, io, network
        /// Never a URL's: an argument a run cannot start with (any slip
        /// `RunSettings.usageProblem` finds: options that exclude each other,
        /// an empty value, a `-H` line that is not a header; `--output-dir`
        /// naming the cache directory), said as a usage error. A file or folder the machine does not let
        /// a run use is `io`, with its `path`.
        case usage
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
    /// The file or folder a run cannot start with (an `--input` list, the
    /// `--output-dir`), as given; nil for a URL's failure.
    public let path: String?

    public init(kind: Kind, message: String, status: Int? = nil, attempts: Int = 0, source: Source? = nil,
                effectiveURL: String? = nil, path: String? = nil) {
        self.kind = kind
        self.message = message
        self.status = status
        self.attempts = attempts
        self.source = source
        self.effectiveURL = effectiveURL
        self.path = path
    }

    /// A list of URLs (`--input PATH`; `-`: stdin) that cannot be read, and
    /// why (strerror's words, "is a directory").
    public static func unreadableList(_ path: String, _ problem: String) -> LoadError {
        LoadError(kind: .io, message: "cannot read --input \(path): \(problem)", path: path)
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
