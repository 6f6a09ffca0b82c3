import ImageFormats

/// Where a URL's result came from (SPEC §3).
public enum Source: String, Sendable {
    /// Fresh stored copy, no network.
    case cache
    /// Downloaded now.
    case network
    /// The server answered 304; the stored body was reused.
    case revalidated
    /// A stale stored copy was served: the network failed (`staleIfError`),
    /// `stale-while-revalidate` allowed it, or the run was `offline`;
    /// `LoadResult.reason` says which when the loader knows.
    case stale
    /// Fresh copy from the shared remote cache tier (`--remote-cache`), now stored locally; no origin request.
    case remote
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
    /// A transfer or revalidation is under way. It carries the stored copy
    /// (source `stale`) when there is one, so that a UI can keep showing it
    /// while the refresh runs; nil when nothing usable is stored.
    case loading(LoadResult?)
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
///
/// A value type whose fields live in one shared, immutable box: a phase is
/// copied several times on its way from the lookup to the output, and a
/// copy then retains one object instead of every string (a changed field
/// gets a box of its own).
public struct LoadResult: Sendable {
    /// The body in the cache, or nil for a `no-store` response (not kept;
    /// pass a `Delivery` to get its bytes).
    public var path: String? { fields.path }
    public var source: Source { fields.source }
    public var bytes: Int64 { fields.bytes }
    public var status: Int? { fields.status }
    public var contentType: String? { fields.contentType }
    public var format: ImageFormat? { fields.format }
    public var width: Int? { fields.width }
    public var height: Int? { fields.height }
    /// Requests made, retries included: 0 for a cache hit; for a stale copy
    /// served after a failure (`--stale-if-error`), the failed attempts.
    public internal(set) var attempts: Int {
        get { fields.attempts }
        set { change { $0.attempts = newValue } }
    }
    /// HTTP detail for `-v`.
    public var httpVersion: String? { fields.httpVersion }
    public var redirects: Int { fields.redirects }
    public var effectiveURL: String? { fields.effectiveURL }
    /// Something the user should hear about although the URL succeeded:
    /// why a stale copy was served (`--stale-if-error`).
    public internal(set) var warning: String? {
        get { fields.warning }
        set { change { $0.warning = newValue } }
    }
    /// Where a `Delivery.receiver` put the body, and how.
    public internal(set) var receipt: DeliveryReceipt? {
        get { fields.receipt }
        set { change { $0.receipt = newValue } }
    }
    /// Why the body is not in the cache although it was downloaded (the
    /// cache could not be written): it was only delivered (`-o`, `-P`).
    public internal(set) var storeFailure: String? {
        get { fields.storeFailure }
        set { change { $0.storeFailure = newValue } }
    }
    /// Why a `stale` copy was served: `stale-while-revalidate` (RFC 5861),
    /// `stale-if-error` (the network failed), `offline` (no network was
    /// asked for). JSON `reason`.
    public internal(set) var reason: String? {
        get { fields.reason }
        set { change { $0.reason = newValue } }
    }
    /// The temporary file of a `no-store` body until it has been delivered.
    var transientBody: TransientBody? {
        get { fields.transientBody }
        set {
            if newValue == nil && fields.transientBody == nil { return }   // the usual case: nothing to change
            change { $0.transientBody = newValue }
        }
    }

    private var box: Box
    private var fields: Fields { box.fields }

    init(path: String?, source: Source, bytes: Int64, status: Int?, contentType: String?, format: ImageFormat?,
         width: Int?, height: Int?, attempts: Int, httpVersion: String?, redirects: Int, effectiveURL: String?,
         warning: String? = nil, transientBody: TransientBody? = nil) {
        box = Box(Fields(path: path, source: source, bytes: bytes, status: status, contentType: contentType, format: format,
                         width: width, height: height, attempts: attempts, httpVersion: httpVersion, redirects: redirects,
                         effectiveURL: effectiveURL, warning: warning, reason: nil, transientBody: transientBody))
    }

    private mutating func change(_ edit: (inout Fields) -> Void) {
        var changed = fields
        edit(&changed)
        box = Box(changed)
    }

    private struct Fields: Sendable {
        var path: String?
        var source: Source
        var bytes: Int64
        var status: Int?
        var contentType: String?
        var format: ImageFormat?
        var width: Int?
        var height: Int?
        var attempts: Int
        var httpVersion: String?
        var redirects: Int
        var effectiveURL: String?
        var warning: String?
        var reason: String?
        var transientBody: TransientBody?
        var receipt: DeliveryReceipt?
        var storeFailure: String?
    }

    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }
}

/// A phase change of one URL, as a batch reports it.
public struct LoadEvent: Sendable {
    /// The URL as given, with any password removed.
    public let url: String
    public let phase: Phase
    /// Seconds since this URL started (0 for `loading`).
    public let duration: Double
    /// Not a phase change: the outcome of a background revalidation
    /// (`stale-while-revalidate`) of a URL already reported `success`/`stale`.
    /// `phase` is then that outcome (`success` from `revalidated` or
    /// `network`, or `failure`); it comes after the URL's terminal event.
    public var refreshed = false
}
