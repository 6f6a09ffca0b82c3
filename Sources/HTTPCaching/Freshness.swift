import DiskCache
import Fetch
import Support

/// RFC 9111 §4.2 freshness for a private cache, computed from stored metadata.
///
/// An entry is fresh while its current age (§4.2.3) is below its freshness
/// lifetime (§4.2.1): `--max-age` if given (for a remembered error, at most
/// the server's own lifetime), else the first `max-age`, else
/// `Expires` minus `Date` (or minus the receive time), else the heuristic
/// 10 % of `Date − Last-Modified` (§4.2.2), else `--default-ttl`.
public struct Freshness: Sendable {
    /// Lifetime for stored bodies with neither explicit freshness nor
    /// `Last-Modified` (`--default-ttl`; 0 = never fresh by default).
    public var defaultTTL: Double
    /// `--max-age`: replaces whatever the server said (including `no-cache`), for this run.
    /// A remembered error status only ever gets shorter: it stays fresh for
    /// the smaller of this and the server's own lifetime (never served stale,
    /// SPEC §5), so `--max-age 1d` does not turn a `503` remembered for 10 s
    /// into a day of failures without a request, and `--max-age 0` still asks again.
    public var maxAgeOverride: Double?
    /// The 10 % rule of §4.2.2 (`--no-heuristic` turns it off).
    public var heuristic: Bool

    public init(defaultTTL: Double = CachingDefaults.defaultTTL, maxAgeOverride: Double? = nil, heuristic: Bool = true) {
        self.defaultTTL = defaultTTL
        self.maxAgeOverride = maxAgeOverride
        self.heuristic = heuristic
    }

    /// The stored response's `Cache-Control` directives.
    public static func cacheControl(_ meta: CacheMetadata) -> CacheControl {
        StoredFields(meta).cacheControl(meta)
    }

    /// The stored headers freshness reads, found in one pass over the
    /// record's headers (every hit comes through here) by their kind, which
    /// a decoded record recognised once (`CacheMetadata.headerKind(at:)`).
    /// It keeps their positions, not copies of their values.
    private struct StoredFields {
        /// The first of each (as `CacheMetadata.header` finds them), by index.
        var date: Int?
        var expires: Int?
        var expiresCount = 0
        var lastModified: Int?
        var age: Int?
        /// The first `Cache-Control` and how many there are (most records have none).
        var cacheControlFirst: Int?
        var cacheControlCount = 0

        /// Borrowed: an initializer's argument is otherwise passed owned, and
        /// every hit paid a copy of the whole record (each of its strings and
        /// arrays retained, then released) to read four headers.
        init(_ meta: borrowing CacheMetadata) {
            for i in 0..<meta.headerCount {
                switch meta.headerKind(at: i) {
                case .age where age == nil:
                    age = i
                case .date where date == nil:
                    date = i
                case .expires:
                    if expires == nil { expires = i }
                    expiresCount += 1
                case .lastModified where lastModified == nil:
                    lastModified = i
                case .cacheControl:
                    if cacheControlFirst == nil { cacheControlFirst = i }
                    cacheControlCount += 1
                default:
                    continue
                }
            }
        }

        /// Every `Cache-Control` value, in order, parsed together, in place
        /// (no array of values, no `String` made of a record's bytes).
        @inline(__always)
        func cacheControl(_ meta: borrowing CacheMetadata) -> CacheControl {
            var cc = CacheControl()
            guard let first = cacheControlFirst else { return cc }
            meta.withHeaderValue(at: first) { cc.add(utf8: $0) }
            if cacheControlCount > 1 {
                for i in (first + 1)..<meta.headerCount where meta.headerKind(at: i) == .cacheControl {
                    meta.withHeaderValue(at: i) { cc.add(utf8: $0) }
                }
            }
            return cc
        }

        /// The HTTP date in the header at `index`, if it is one.
        static func date(_ meta: borrowing CacheMetadata, _ index: Int?) -> Double? {
            guard let index else { return nil }
            // In place: a decoded record's date is never made a string.
            return meta.withHeaderValue(at: index, HTTPDate.parse(utf8:))
        }

        /// The `Date` the origin sent, or the receive time when it sent none or
        /// an invalid one (RFC 9110 §6.6.1: a recipient adds the receive time).
        func dateValue(_ meta: borrowing CacheMetadata) -> Double {
            Self.date(meta, date) ?? meta.responseTime
        }
    }

    /// Seconds the response may be used without revalidation, and whether
    /// the server said so explicitly (`max-age` or `Expires`). A heuristic
    /// or default lifetime is not explicit.
    public func lifetime(_ meta: CacheMetadata) -> (seconds: Double, explicit: Bool) {
        if let maxAgeOverride, meta.hasBody { return (maxAgeOverride, true) }
        let fields = StoredFields(meta)
        return lifetime(meta, fields.cacheControl(meta), fields, dateValue: { fields.dateValue(meta) })
    }

    /// `lifetime` with the parsed `Cache-Control` and the headers given (a hit finds them once).
    private func lifetime(_ meta: CacheMetadata, _ cc: CacheControl, _ fields: StoredFields,
                          dateValue: () -> Double) -> (seconds: Double, explicit: Bool) {
        if let maxAgeOverride {
            guard !meta.hasBody else { return (maxAgeOverride, true) }
            // A remembered error: the server's lifetime caps the override (`cc` is empty under one: read it here).
            var own = self
            own.maxAgeOverride = nil
            let server = own.lifetime(meta, fields.cacheControl(meta), fields, dateValue: dateValue)
            return (min(maxAgeOverride, server.seconds), true)
        }
        if cc.maxAgeInvalid { return (0, true) }
        if let maxAge = cc.maxAge { return (Double(maxAge), true) }   // Expires is then ignored (§5.3)
        if fields.expires != nil {
            // An invalid Expires (e.g. "0", or two of them: it is a singleton field) means already expired (§5.3).
            guard fields.expiresCount == 1, let expiry = StoredFields.date(meta, fields.expires) else { return (0, true) }
            return (expiry - dateValue(), true)
        }
        if heuristic, StatusCacheability.isHeuristicallyCacheable(meta.status) || cc.isPublic,
           let modified = StoredFields.date(meta, fields.lastModified) {
            return (max(0, dateValue() - modified) * CachingDefaults.heuristicFraction, false)
        }
        // The default lifetime is for stored images: a remembered error needs freshness from the server.
        return (meta.hasBody ? defaultTTL : 0, false)
    }

    /// §4.2.3: the corrected initial age (the larger of the apparent age and
    /// `Age` plus the request's round trip), plus the time since receipt.
    public func currentAge(_ meta: CacheMetadata, now: Double) -> Double {
        let fields = StoredFields(meta)
        return currentAge(meta, fields, now: now, dateValue: fields.dateValue(meta))
    }

    private func currentAge(_ meta: CacheMetadata, _ fields: StoredFields, now: Double, dateValue: Double) -> Double {
        let ageValue = fields.age.flatMap { Self.ageSeconds(meta.headerValue(at: $0)) } ?? 0
        let apparentAge = max(0, meta.responseTime - dateValue)
        let responseDelay = max(0, meta.responseTime - meta.requestTime)
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        return correctedInitialAge + max(0, now - meta.responseTime)
    }

    /// Fresh and usable without contacting the server. `no-cache` entries are
    /// never fresh (always revalidated), unless `--max-age` overrides.
    public func isFresh(_ meta: CacheMetadata, now: Double) -> Bool {
        // Every hit comes through here: the headers are found in one pass, Cache-Control and Date parsed once.
        let fields = StoredFields(meta)
        let cc = maxAgeOverride == nil ? fields.cacheControl(meta) : CacheControl()
        if maxAgeOverride == nil && cc.noCache { return false }
        let date = fields.dateValue(meta)
        return lifetime(meta, cc, fields, dateValue: { date }).seconds > currentAge(meta, fields, now: now, dateValue: date)
    }

    /// Whether a stale copy may be served when the network fails: never for
    /// `must-revalidate` (§4.2.4) or `no-cache` (which requires a successful
    /// validation before every use).
    public func mayServeStale(_ meta: CacheMetadata) -> Bool {
        let cc = Self.cacheControl(meta)
        return !cc.mustRevalidate && !cc.noCache
    }

    /// `mayServeStale`, and within the `stale-if-error=N` windows (RFC 5861
    /// §4) of the response and of the request (`-H 'Cache-Control:
    /// stale-if-error=N'`), when they give one: past it, the error stands.
    public func mayServeStale(_ meta: CacheMetadata, now: Double, requestWindow: Int? = nil) -> Bool {
        staleRefusal(meta, now: now, requestWindow: requestWindow) == nil
    }

    /// Why `mayServeStale` says no, in words for the failure's message
    /// (`marked must-revalidate by the server`, …), or nil when it says yes.
    public func staleRefusal(_ meta: CacheMetadata, now: Double, requestWindow: Int? = nil) -> String? {
        let fields = StoredFields(meta)
        let cc = fields.cacheControl(meta)
        if cc.mustRevalidate { return "the server marked it must-revalidate" }
        if cc.noCache { return "the server marked it no-cache" }
        let windows = [cc.staleIfError, requestWindow].compactMap { $0 }
        guard !windows.isEmpty else { return nil }
        let over = staleness(meta, cc, fields, now: now)
        guard !windows.contains(where: { over <= Double($0) }) else { return nil }
        return "it is \(HumanUnits.duration(over)) stale, past its stale-if-error window of \(windows.max() ?? 0) s"
    }

    /// RFC 5861 §4: the failures a stale copy may stand in for: no answer at
    /// all (DNS, connect, TLS, timeout, a broken transfer) or a 500, 502, 503
    /// or 504. Any other status is the server's answer and stands.
    public static func staleMayAnswer(_ error: FetchError) -> Bool {
        if error.kind == .http { return [500, 502, 503, 504].contains(error.status ?? 0) }
        return [.dns, .connect, .tls, .timeout, .network].contains(error.kind)
    }

    /// Whether the request itself asks that no stored answer be used without
    /// the server's word (`-H 'Cache-Control: no-cache'`, `max-age=0`, or
    /// `Pragma: no-cache` when there is no `Cache-Control`: RFC 9111
    /// §5.2.1.1, §5.2.1.4, §5.4): every URL is then revalidated, as with
    /// `--refresh`.
    public static func requestRequiresValidation(_ requestHeaders: HTTPHeaders) -> Bool {
        if requestHeaders["Cache-Control"] != nil {
            let cc = CacheControl(requestHeaders)
            return cc.noCache || cc.maxAge == 0
        }
        return requestHeaders.values("Pragma").contains { value in
            value.split(separator: ",").contains { trimWhitespaceLower($0) == "no-cache" }
        }
    }

    /// The request's own `stale-if-error=N` (`-H 'Cache-Control: stale-if-error=N'`), if any.
    public static func requestStaleWindow(_ requestHeaders: HTTPHeaders) -> Int? {
        requestHeaders.combined("Cache-Control").flatMap { CacheControl([$0]).staleIfError }
    }

    /// RFC 5861 §3: the entry is stale, but less than its `stale-while-revalidate`
    /// window past its lifetime: it may be used at once while it is revalidated.
    /// Never for `no-cache` or `must-revalidate`, nor with `--max-age`.
    public func mayServeWhileRevalidating(_ meta: CacheMetadata, now: Double) -> Bool {
        guard maxAgeOverride == nil, meta.hasBody else { return false }
        let fields = StoredFields(meta)
        let cc = fields.cacheControl(meta)
        guard let window = cc.staleWhileRevalidate, !cc.noCache, !cc.mustRevalidate else { return false }
        let over = staleness(meta, cc, fields, now: now)
        return over >= 0 && over < Double(window)
    }

    /// Seconds since the entry became stale (negative while it is fresh).
    private func staleness(_ meta: CacheMetadata, _ cc: CacheControl, _ fields: StoredFields, now: Double) -> Double {
        let date = fields.dateValue(meta)
        return currentAge(meta, fields, now: now, dateValue: date) - lifetime(meta, cc, fields, dateValue: { date }).seconds
    }

    /// `Age` (RFC 9111 §5.1): a non-negative integer; of a list, the first
    /// member counts; anything else is ignored.
    public static func ageSeconds(_ value: String) -> Double? {
        let first = value.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return CacheControl.deltaSeconds(trimWhitespace(first)).map(Double.init)
    }
}
