import DiskCache
import Fetch
import HTTPCaching
import Testing

@Suite struct FreshnessTests {
    func meta(_ headers: [(String, String)], responseTime: Double = 1_000_000, requestTime: Double? = nil) -> CacheMetadata {
        CacheMetadata(url: "https://x.test/a", status: 200, requestTime: requestTime ?? responseTime, responseTime: responseTime,
                      headers: headers.map { CacheMetadata.Header($0.0, $0.1) })
    }

    @Test func maxAgeFirstWinsAndInvalidMeansStale() {
        #expect(CacheControl(["max-age=60, max-age=5"]).maxAge == 60)
        #expect(CacheControl(["max-age=60", "max-age=5"]).maxAge == 60)
        #expect(CacheControl(["max-age=abc"]).maxAgeInvalid)
        #expect(CacheControl(["max-age=-1"]).maxAgeInvalid)
        #expect(CacheControl(["MAX-AGE=\"30\""]).maxAge == 30)
        let f = Freshness(defaultTTL: 3600)
        #expect(f.isFresh(meta([("Cache-Control", "max-age=60")]), now: 1_000_030))
        #expect(!f.isFresh(meta([("Cache-Control", "max-age=60")]), now: 1_000_061))
        #expect(!f.isFresh(meta([("Cache-Control", "max-age=x")]), now: 1_000_000))
    }

    @Test func directives() {
        let cc = CacheControl(["no-cache, No-Store", "must-revalidate, private, community=\"a,b\""])
        #expect(cc.noCache && cc.noStore && cc.mustRevalidate)
        let f = Freshness()
        #expect(!f.isFresh(meta([("Cache-Control", "no-cache, max-age=600")]), now: 1_000_001))
        #expect(!f.mayServeStale(meta([("Cache-Control", "must-revalidate")])))
        #expect(f.mayServeStale(meta([("Cache-Control", "max-age=1")])))
    }

    @Test func expiresAgainstDateOrReceiveTime() {
        let date = HTTPDate.format(1_000_000)
        let expires = HTTPDate.format(1_000_100)
        let f = Freshness(defaultTTL: 0)
        // Received 30 s after its Date (a slow network, a server clock behind): Expires counts from Date.
        #expect(f.lifetime(meta([("Date", date), ("Expires", expires)], responseTime: 1_000_030)).seconds == 100)
        #expect(f.lifetime(meta([("Expires", expires)], responseTime: 1_000_050)).seconds == 50)
        #expect(f.lifetime(meta([("Expires", "0")])).seconds == 0)
        #expect(f.lifetime(meta([("Cache-Control", "max-age=7"), ("Expires", expires)])).seconds == 7)
    }

    @Test func ageHeaderAndRoundTripCountAgainstFreshness() {
        let f = Freshness()
        let m = meta([("Cache-Control", "max-age=100"), ("Age", "90")], responseTime: 1_000_000, requestTime: 999_995)
        #expect(f.currentAge(m, now: 1_000_000) == 95)
        #expect(f.isFresh(m, now: 1_000_004))
        #expect(!f.isFresh(m, now: 1_000_006))
    }

    @Test func defaultTTLAndOverride() {
        #expect(Freshness(defaultTTL: 10).isFresh(meta([]), now: 1_000_009))
        #expect(!Freshness(defaultTTL: 10).isFresh(meta([]), now: 1_000_011))
        #expect(!Freshness(defaultTTL: 0).isFresh(meta([]), now: 1_000_000))
        #expect(!Freshness(defaultTTL: 0).lifetime(meta([])).explicit)
        let override = Freshness(defaultTTL: 0, maxAgeOverride: 3600)
        #expect(override.isFresh(meta([("Cache-Control", "no-cache, max-age=0")]), now: 1_000_100))
    }

    /// `--max-age` may shorten a remembered error's life, never lengthen it:
    /// an error is never served stale by the server's own lifetime (SPEC §5).
    @Test func maxAgeNeverLengthensARememberedError() {
        let error = CacheMetadata(url: "https://x.test/a", status: 404, requestTime: 1_000_000, responseTime: 1_000_000,
                                  headers: [CacheMetadata.Header("Cache-Control", "max-age=60")], hasBody: false)
        let long = Freshness(defaultTTL: 0, maxAgeOverride: 3600)
        #expect(long.isFresh(error, now: 1_000_030), "inside the server's 60 s")
        #expect(!long.isFresh(error, now: 1_000_120), "past the server's 60 s, though inside --max-age")
        #expect(long.lifetime(error).seconds == 60)
        #expect(!Freshness(defaultTTL: 0, maxAgeOverride: 10).isFresh(error, now: 1_000_020), "shortened")
        #expect(!Freshness(defaultTTL: 0, maxAgeOverride: 0).isFresh(error, now: 1_000_000))
        let body = meta([("Cache-Control", "max-age=60")])
        #expect(long.isFresh(body, now: 1_000_120), "a stored body: --max-age still overrides the server")
    }

    @Test func cacheControlSyntax() {
        #expect(CacheControl(["max-age = 60"]).maxAge == 60, "optional whitespace around the value")
        #expect(CacheControl(["max-age=99999999999999999999999"]).maxAge == Int.max, "too large: clamped, not invalid")
        #expect(CacheControl(["max-age=1e3"]).maxAgeInvalid)
        #expect(CacheControl(["max-age"]).maxAgeInvalid, "no value at all")
        #expect(CacheControl(["max-age=\"5\"junk"]).maxAgeInvalid)
        let quoted = CacheControl(["community=\"a, max-age=1, \\\" no-store\", max-age=30"])
        #expect(quoted.maxAge == 30 && !quoted.noStore, "commas and escaped quotes inside a quoted string do not split")
        #expect(CacheControl(["no-cache=\"Set-Cookie\""]).noCache, "the qualified form is treated as unqualified")
        let shared = CacheControl(["s-maxage=600, proxy-revalidate, public"])
        #expect(shared.maxAge == nil && !shared.mustRevalidate, "shared-cache directives do not apply to a private cache")
        #expect(CacheControl([",,, ,"]) == CacheControl())
        #expect(CacheControl(["max-age=x, max-age=60"]).maxAgeInvalid, "the first occurrence decides, even when invalid")
    }

    @Test func stalenessThatHeadersDecide() {
        let f = Freshness(defaultTTL: 3600)
        let date = HTTPDate.format(1_000_000)
        // Expires is ignored when max-age is present (RFC 9111 §5.3).
        #expect(f.isFresh(meta([("Cache-Control", "max-age=100"), ("Expires", "0")]), now: 1_000_050))
        // Expires before Date: negative lifetime, stale at once.
        #expect(!f.isFresh(meta([("Date", date), ("Expires", HTTPDate.format(999_000))]), now: 1_000_000))
        // Apparent age: a Date 50 s before receipt counts as age.
        #expect(f.currentAge(meta([("Date", HTTPDate.format(999_950))]), now: 1_000_000) == 50)
        // A Date in the future does not make the age negative.
        #expect(f.currentAge(meta([("Date", HTTPDate.format(1_000_500))]), now: 1_000_000) == 0)
        #expect(f.currentAge(meta([("Age", "7, 9")]), now: 1_000_000) == 7)
        #expect(f.currentAge(meta([("Age", "-3")]), now: 1_000_000) == 0)
        #expect(f.currentAge(meta([("Age", "nan")]), now: 1_000_000) == 0)
        #expect(f.mayServeStale(meta([("Cache-Control", "max-age=0")])))
        #expect(!f.mayServeStale(meta([("Cache-Control", "no-cache")])))
    }

    @Test func aStaleCopyMayStandInOnlyForNoAnswerOrAServerFailure() {
        func error(_ kind: FetchError.Kind, _ status: Int? = nil) -> FetchError { FetchError(kind, url: "https://x.test/a", status: status) }
        for kind in [FetchError.Kind.dns, .connect, .tls, .timeout, .network] { #expect(Freshness.staleMayAnswer(error(kind)), "\(kind)") }
        for status in [500, 502, 503, 504] { #expect(Freshness.staleMayAnswer(error(.http, status)), "\(status)") }
        for status in [404, 403, 501, 505] { #expect(!Freshness.staleMayAnswer(error(.http, status)), "\(status)") }
        #expect(!Freshness.staleMayAnswer(error(.cancelled)))
        #expect(Freshness.requestStaleWindow(["Cache-Control": "max-age=0", "cache-control": "stale-if-error=30"]) == 30)
        #expect(Freshness.requestStaleWindow(["Accept": "*/*"]) == nil)
    }
}
