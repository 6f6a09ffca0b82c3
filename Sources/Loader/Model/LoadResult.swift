import DiskCache
import ImageFormats

/// A URL that ended in `success`.
///
/// A value type whose fields live in one shared, immutable box: a phase is
/// copied several times on its way from the lookup to the output, and a
/// copy then retains one object instead of every string (a changed field
/// gets a box of its own).
public struct LoadResult: Sendable {
    /// The body in the cache, or nil for a `no-store` response (not kept;
    /// pass a `Delivery` to get its bytes). Built when asked: a result
    /// keeps the cache directory and the entry's key (`stored`).
    public var path: String? { fields.stored?.path }
    /// Where the body is stored, in the pieces the result line writes (no
    /// path is built per cache hit), or nil as for `path`.
    var stored: StoredBody? { fields.stored }
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
    /// Which check decided this downloaded body was an image (JSON
    /// `checked`): nil for a cache hit or a body stored without a check (`--any`).
    public internal(set) var checked: ImageCheck? {
        get { fields.checked }
        set { change { $0.checked = newValue } }
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
         warning: String? = nil, transientBody: TransientBody? = nil, checked: ImageCheck? = nil) {
        self.init(stored: path.map(StoredBody.path), source: source, bytes: bytes, status: status, contentType: contentType,
                  format: format, width: width, height: height, attempts: attempts, httpVersion: httpVersion,
                  redirects: redirects, effectiveURL: effectiveURL, warning: warning, transientBody: transientBody,
                  checked: checked)
    }

    init(stored: StoredBody?, source: Source, bytes: Int64, status: Int?, contentType: String?, format: ImageFormat?,
         width: Int?, height: Int?, attempts: Int, httpVersion: String?, redirects: Int, effectiveURL: String?,
         warning: String? = nil, transientBody: TransientBody? = nil, checked: ImageCheck? = nil) {
        box = Box(Fields(stored: stored, source: source, bytes: bytes, status: status,
                         contentType: ContentTypeLabel.of(contentType), format: format,
                         width: width, height: height, attempts: attempts, httpVersion: httpVersion, redirects: redirects,
                         effectiveURL: effectiveURL, warning: warning, reason: nil, transientBody: transientBody,
                         checked: checked))
    }

    private mutating func change(_ edit: (inout Fields) -> Void) {
        var changed = fields
        edit(&changed)
        box = Box(changed)
    }

    /// Where a stored body is: `directory/<key>`, joined only when asked
    /// (`path`): a cache entry's directory and key (its digest, whose 32
    /// lowercase hex digits need no JSON escape), which the result line
    /// writes as they are. A path given whole is `directory` with no `key`.
    /// (A struct of a string and a digest: copying one is one retain, with
    /// none of an enum's outlined copies, and no key string is made.)
    struct StoredBody: Sendable {
        let directory: String
        let key: MD5.Digest?

        static func entry(directory: String, key: MD5.Digest) -> StoredBody { StoredBody(directory: directory, key: key) }
        static func path(_ path: String) -> StoredBody { StoredBody(directory: path, key: nil) }

        var path: String {
            guard let key else { return directory }
            return key.withHex { digits, _ in CacheEntry.bodyPath(directory: directory, name: digits) }
        }

        /// Whether a `/` goes between `directory` and the key (not after the root's own).
        var hasSeparator: Bool { CacheEntry.needsSeparator(after: directory) }
    }

    private struct Fields: Sendable {
        var stored: StoredBody?
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
        var checked: ImageCheck?
    }

    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }
}
