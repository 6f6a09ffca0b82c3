import DiskCache
import Fetch

/// RFC 9111 §4.2 freshness for a private cache, computed from stored metadata.
public struct Freshness: Sendable {
    /// Lifetime for responses with no explicit freshness (`--default-ttl`; 0 = none).
    public var defaultTTL: Double
    /// `--max-age`: replaces whatever the server said, for this run.
    public var maxAgeOverride: Double?

    public init(defaultTTL: Double = Defaults.defaultTTL, maxAgeOverride: Double? = nil) {
        self.defaultTTL = defaultTTL
        self.maxAgeOverride = maxAgeOverride
    }

    /// Seconds the response may be used without revalidation, and whether
    /// the server said so explicitly (`max-age` or `Expires`).
    public func lifetime(_ meta: CacheMetadata) -> (seconds: Double, explicit: Bool) {
        if let maxAgeOverride { return (maxAgeOverride, true) }
        let cc = CacheControl(meta.headers.filter { $0.name.lowercased() == "cache-control" }.map(\.value))
        if cc.maxAgeInvalid { return (0, true) }
        if let maxAge = cc.maxAge { return (Double(maxAge), true) }
        if let expires = meta.header("Expires") {
            // An invalid Expires (e.g. "0") means already expired (§5.3).
            guard let expiry = HTTPDate.parse(expires) else { return (0, true) }
            let base = meta.header("Date").flatMap(HTTPDate.parse) ?? meta.responseTime
            return (expiry - base, true)
        }
        return (defaultTTL, false)
    }

    /// §4.2.3: apparent age, corrected for `Age` and the request's round trip,
    /// plus the time it has been stored.
    public func currentAge(_ meta: CacheMetadata, now: Double) -> Double {
        let dateValue = meta.header("Date").flatMap(HTTPDate.parse) ?? meta.responseTime
        let ageValue = meta.header("Age").flatMap { Double(trimWhitespace($0)) }.map { max(0, $0) } ?? 0
        let apparentAge = max(0, meta.responseTime - dateValue)
        let responseDelay = max(0, meta.responseTime - meta.requestTime)
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        return correctedInitialAge + max(0, now - meta.responseTime)
    }

    /// Fresh and usable without contacting the server. `no-cache` entries are
    /// never fresh (always revalidated), unless `--max-age` overrides.
    public func isFresh(_ meta: CacheMetadata, now: Double) -> Bool {
        if maxAgeOverride == nil {
            let cc = CacheControl(meta.headers.filter { $0.name.lowercased() == "cache-control" }.map(\.value))
            if cc.noCache { return false }
        }
        return lifetime(meta).seconds > currentAge(meta, now: now)
    }

    /// Whether a stale copy may be served when the network fails.
    public func mayServeStale(_ meta: CacheMetadata) -> Bool {
        let cc = CacheControl(meta.headers.filter { $0.name.lowercased() == "cache-control" }.map(\.value))
        return !cc.mustRevalidate && !cc.noCache
    }
}
