/// Where a URL's result came from (SPEC §3).
public enum Source: String, Sendable {
    /// Fresh stored copy, no network.
    case cache
    /// Downloaded now.
    case network
    /// The server answered 304; the stored body was reused.
    case revalidated
    /// The network failed; a stale stored copy was served (`staleIfError`).
    case stale
}

/// Why a URL ended in `empty`.
public enum EmptyReason: String, Sendable {
    /// `--offline` and no intact stored entry.
    case notCached = "not-cached"
    /// A cancellation stopped the work before this URL started.
    case cancelled
}

/// The phase of one URL: `empty → loading → success | failure` (SPEC §2).
public enum Phase: Sendable {
    case empty(EmptyReason)
    case loading
    case success(LoadResult)
    case failure(LoadError)

    public var name: String {
        switch self {
        case .empty: return "empty"
        case .loading: return "loading"
        case .success: return "success"
        case .failure: return "failure"
        }
    }

    public var isTerminal: Bool {
        if case .loading = self { return false }
        return true
    }
}

/// A URL that ended in `success`.
public struct LoadResult: Sendable {
    /// The body in the cache, or nil for a `no-store` response (not kept;
    /// pass a `Delivery` to get its bytes).
    public let path: String?
    public let source: Source
    public let bytes: Int64
    public let status: Int?
    public let contentType: String?
    public let format: String?
    public let width: Int?
    public let height: Int?
    /// Requests made, retries included: 0 for a cache hit; for a stale copy
    /// served after a failure (`--stale-if-error`), the failed attempts.
    public internal(set) var attempts: Int
    /// HTTP detail for `-v`.
    public let httpVersion: String?
    public let redirects: Int
    public let effectiveURL: String?
    /// Something the user should hear about although the URL succeeded:
    /// why a stale copy was served (`--stale-if-error`).
    public internal(set) var warning: String? = nil
    /// The temporary file of a `no-store` body until it has been delivered.
    var transientBody: TransientBody? = nil
}

/// A phase change of one URL, as a batch reports it.
public struct LoadEvent: Sendable {
    /// The URL as given, with any password removed.
    public let url: String
    public let phase: Phase
    /// Seconds since this URL started (0 for `loading`).
    public let duration: Double
}
