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
    public var path: String? { core.stored?.path }
    /// Where the body is stored, in the pieces the result line writes (no
    /// path is built per cache hit), or nil as for `path`.
    var stored: StoredBody? { core.stored }
    public var source: Source { core.source }
    public var bytes: Int64 { core.bytes }
    public var status: Int? { core.status == Core.none32 ? nil : Int(core.status) }
    public var contentType: String? { core.contentType }
    public var format: ImageFormat? { core.format == Core.noFormat ? nil : ImageFormat.all[Int(core.format)] }
    public var width: Int? { core.width == Core.none ? nil : core.width }
    public var height: Int? { core.height == Core.none ? nil : core.height }
    /// Requests made, retries included: 0 for a cache hit; for a stale copy
    /// served after a failure (`--stale-if-error`), the failed attempts.
    public internal(set) var attempts: Int {
        get { box.extra?.fields.attempts ?? 0 }
        set { changeExtra { $0.attempts = newValue } }
    }
    /// Which check decided this downloaded body was an image (JSON
    /// `checked`): nil for a cache hit or a body stored without a check (`--any`).
    public internal(set) var checked: ImageCheck? {
        get { box.extra?.fields.checked }
        set { changeExtra { $0.checked = newValue } }
    }
    /// How many bytes of the body a kept partial body gave (SPEC §5,
    /// resume): this run asked only for the rest (`Range: bytes=N-`), and a
    /// `206` completed it. Nil when the body came whole. JSON `resumedFrom`.
    public internal(set) var resumedFrom: Int64? {
        get { box.extra?.fields.resumedFrom }
        set { changeExtra { $0.resumedFrom = newValue } }
    }
    /// HTTP detail for `-v`.
    public var httpVersion: String? { box.extra?.fields.httpVersion }
    public var redirects: Int { box.extra?.fields.redirects ?? 0 }
    public var effectiveURL: String? { box.extra?.fields.effectiveURL }
    /// Something the user should hear about although the URL succeeded:
    /// why a stale copy was served (`--stale-if-error`).
    public internal(set) var warning: String? {
        get { box.extra?.fields.warning }
        set { changeExtra { $0.warning = newValue } }
    }
    /// Where a `Delivery.receiver` put the body, and how.
    public internal(set) var receipt: DeliveryReceipt? {
        get { box.extra?.fields.receipt }
        set { changeExtra { $0.receipt = newValue } }
    }
    /// Why the body is not in the cache although it was downloaded (the
    /// cache could not be written): it was only delivered (`-o`, `-P`).
    public internal(set) var storeFailure: String? {
        get { box.extra?.fields.storeFailure }
        set { changeExtra { $0.storeFailure = newValue } }
    }
    /// Why a `stale` copy was served: `stale-while-revalidate` (RFC 5861),
    /// `stale-if-error` (the network failed), `offline` (no network was
    /// asked for). JSON `reason`.
    public internal(set) var reason: String? {
        get { core.reason }
        set { change { $0.reason = newValue } }
    }
    /// The temporary file of a `no-store` body until it has been delivered.
    var transientBody: TransientBody? {
        get { box.extra?.fields.transientBody }
        set {
            // The usual case: nothing to change (a 304's or a download's result has extra fields, but no
            // transient body: letting go of none made both boxes anew, ~1.2 k instructions a URL).
            if newValue == nil && box.extra?.fields.transientBody == nil { return }
            changeExtra { $0.transientBody = newValue }
        }
    }

    private var box: Box
    private var core: Core { box.core }
    /// The fields a cache hit leaves at their defaults (`Extra.none` when none is set); each getter reads its own.
    private var extra: Extra { box.extra?.fields ?? .none }

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
        self.init(stored: stored, source: source, bytes: bytes, status: status, contentType: contentType,
                  formatCode: Core.code(format), width: width, height: height, attempts: attempts, httpVersion: httpVersion,
                  redirects: redirects, effectiveURL: effectiveURL, warning: warning, transientBody: transientBody,
                  checked: checked)
    }

    /// `init(stored:…format:…)` for a stored entry's format, given by the
    /// record's name for it (a 304's result): no `ImageFormat` made of the
    /// name to be looked up again by its name.
    init(stored: StoredBody?, source: Source, bytes: Int64, status: Int?, contentType: String?, formatName: String?,
         width: Int?, height: Int?, attempts: Int, httpVersion: String?, redirects: Int, effectiveURL: String?,
         checked: ImageCheck? = nil) {
        self.init(stored: stored, source: source, bytes: bytes, status: status, contentType: contentType,
                  formatCode: Core.code(name: formatName), width: width, height: height, attempts: attempts,
                  httpVersion: httpVersion, redirects: redirects, effectiveURL: effectiveURL, warning: nil,
                  transientBody: nil, checked: checked)
    }

    private init(stored: StoredBody?, source: Source, bytes: Int64, status: Int?, contentType: String?, formatCode: UInt8,
                 width: Int?, height: Int?, attempts: Int, httpVersion: String?, redirects: Int, effectiveURL: String?,
                 warning: String?, transientBody: TransientBody?, checked: ImageCheck?) {
        let core = Core(stored: stored, source: source, format: formatCode,
                        status: status.flatMap(Int32.init(exactly:)) ?? Core.none32,
                        bytes: bytes, contentType: ContentTypeLabel.of(contentType),
                        width: width ?? Core.none, height: height ?? Core.none, reason: nil)
        let extra = Extra(attempts: attempts, checked: checked, httpVersion: httpVersion, redirects: redirects,
                          effectiveURL: effectiveURL, warning: warning, transientBody: transientBody, receipt: nil,
                          storeFailure: nil, resumedFrom: nil)
        box = Box(core, extra: extra.isNone ? nil : ExtraBox(extra))
    }

    /// A stored entry's result (a cache hit, a stale copy, a remote one):
    /// no request was made, so it has no extra fields, and its format is
    /// found by the record's name for it (`Core.code(name:)`). The general
    /// initializer made an `ImageFormat` of the name, looked the format up
    /// again by its name, and built and dropped an empty `Extra` (~300
    /// instructions a hit).
    init(stored: StoredBody, source: Source, bytes: Int64, status: Int, contentType: String?, formatName: String?,
         width: Int?, height: Int?) {
        box = Box(Core(stored: stored, source: source, format: Core.code(name: formatName),
                       status: Int32(exactly: status) ?? Core.none32, bytes: bytes,
                       contentType: ContentTypeLabel.of(contentType), width: width ?? Core.none,
                       height: height ?? Core.none, reason: nil), extra: nil)
    }

    private mutating func change(_ edit: (inout Core) -> Void) {
        var changed = core
        edit(&changed)
        box = Box(changed, extra: box.extra)
    }

    private mutating func changeExtra(_ edit: (inout Extra) -> Void) {
        var changed = extra
        edit(&changed)
        box = Box(core, extra: changed.isNone ? nil : ExtraBox(changed))
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

    /// What every result has, in a box of at most `Box.fastBinSize` bytes
    /// (a test checks it): glibc frees a block that small without taking
    /// its arena's lock. A batch's consumer frees the boxes its lookups made
    /// on the other pool thread, in that thread's arena; at 344 bytes each
    /// free took that arena's lock, while the other thread allocated the
    /// next chunk's boxes under it (127 sleeps per 10,000 hits; bench/README,
    /// session 18). So the optional numbers are stored without their
    /// optional's tag byte, the format as its index in `ImageFormat.all`,
    /// and what a cache hit does not have lives in `Extra`, a box of its own.
    fileprivate struct Core: Sendable {
        /// An absent `width`/`height`, and `status` (no result is that large or negative).
        static let none = Int.min
        static let none32 = Int32.min
        static let noFormat = UInt8.max

        var stored: StoredBody?
        // Declared here, they fill the bytes `stored` leaves before the next word.
        var source: Source
        var format: UInt8
        var status: Int32
        var bytes: Int64
        var contentType: String?
        var width: Int
        var height: Int
        var reason: String?

        static func code(_ format: ImageFormat?) -> UInt8 {
            guard let format else { return noFormat }
            // Compared by name (the set is closed; names are distinct and short).
            return code(name: format.name)
        }

        /// The index in `ImageFormat.all` of the format called `name` (`ImageFormat.name`), if any.
        static func code(name: String?) -> UInt8 {
            guard let name else { return noFormat }
            let all = ImageFormat.all
            for index in all.indices where all[index].name == name { return UInt8(index) }
            return noFormat
        }
    }

    /// The fields of a download, a delivery or a stale copy served after a failure.
    fileprivate struct Extra: Sendable {
        static let none = Extra(attempts: 0, checked: nil, httpVersion: nil, redirects: 0, effectiveURL: nil, warning: nil,
                                transientBody: nil, receipt: nil, storeFailure: nil, resumedFrom: nil)

        var attempts: Int
        var checked: ImageCheck?
        var httpVersion: String?
        var redirects: Int
        var effectiveURL: String?
        var warning: String?
        var transientBody: TransientBody?
        var receipt: DeliveryReceipt?
        var storeFailure: String?
        var resumedFrom: Int64?

        var isNone: Bool {
            attempts == 0 && checked == nil && httpVersion == nil && redirects == 0 && effectiveURL == nil
                && warning == nil && transientBody == nil && receipt == nil && storeFailure == nil && resumedFrom == nil
        }
    }

    fileprivate final class Box: Sendable {
        /// The largest block glibc's `free` puts in a fast bin (lock-free) by
        /// default: a 128-byte chunk, 8 of them its header (`DEFAULT_MXFAST`).
        static let fastBinSize = 120

        let core: Core
        let extra: ExtraBox?

        init(_ core: Core, extra: ExtraBox?) {
            self.core = core
            self.extra = extra
        }
    }

    fileprivate final class ExtraBox: Sendable {
        let fields: Extra
        init(_ fields: Extra) { self.fields = fields }
    }

    /// The object holding the fields, and the largest block it may be (for a test).
    var boxObject: (object: AnyObject, limit: Int) { (box, Box.fastBinSize) }
}
