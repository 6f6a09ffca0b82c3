import DiskCache
import Fetch
import HTTPCaching
import Testing

/// Conditional requests, validator matching and the 304 merge (RFC 9111 §4.3).
@Suite struct RevalidationRulesTests {
    func stored(_ headers: [(String, String)], varyRequest: [CacheMetadata.Header] = [], hasBody: Bool = true) -> CacheMetadata {
        CacheMetadata(url: "https://x.test/a.png", status: 200, requestTime: 10, responseTime: 11,
                      headers: headers.map { CacheMetadata.Header($0.0, $0.1) }, varyRequest: varyRequest, hasBody: hasBody,
                      bodyLength: 42, bodyDigest: "abc", format: "png", width: 1, height: 2)
    }

    @Test func theConditionalRequestSendsTheStoredValidatorsVerbatim() {
        let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
        let both = Revalidation.conditionalHeaders(stored([("ETag", "W/\"x\""), ("Last-Modified", modified)]))
        #expect(both.map(\.name) == ["If-None-Match", "If-Modified-Since"])
        #expect(both.map(\.value) == ["W/\"x\"", modified])
        #expect(Revalidation.conditionalHeaders(stored([("Last-Modified", "yesterday")])).isEmpty, "an invalid date is not sent")
        #expect(Revalidation.conditionalHeaders(stored([("ETag", "\"x\"")], hasBody: false)).isEmpty, "a remembered error is not revalidated")
        #expect(Revalidation.conditionalHeaders(stored([])).isEmpty)
    }

    @Test func aStoredValidatorThatCannotBeSentIsLeftOutAndTheRestIsSent() {
        let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
        let damaged = Revalidation.conditionalHeaders(stored([("ETag", "\"x\"\r\nX-Admin: 1"), ("Last-Modified", modified)]))
        #expect(damaged.map(\.name) == ["If-Modified-Since"], "the request stays conditional on the date")
        #expect(damaged.firstProblem() == nil)
        var added = damaged
        added.add(name: "X-A", value: "1\nX-B: 2")
        #expect(added.firstProblem()?.name == "X-A", "a field added later is checked")
    }

    @Test func aValidatorMatchesWeaklyAndAMissingOneMatches() {
        let meta = stored([("ETag", "\"v1\"")])
        #expect(Revalidation.validatorMatches(["ETag": "\"v1\""], meta))
        #expect(Revalidation.validatorMatches(["ETag": "W/\"v1\""], meta), "W/ added by compression")
        #expect(Revalidation.validatorMatches(["ETag": " \"v1\" "], meta))
        #expect(!Revalidation.validatorMatches(["ETag": "\"v2\""], meta), "another representation")
        #expect(Revalidation.validatorMatches(HTTPHeaders(), meta), "a 304 without ETag")
        #expect(Revalidation.validatorMatches(["ETag": "\"v2\""], stored([])), "nothing stored to compare")
    }

    @Test func a304ReplacesTheHeadersItCarriesAndKeepsTheRest() {
        let old = stored([("ETag", "\"v1\""), ("Cache-Control", "max-age=60"), ("Cache-Control", "public"),
                          ("Content-Type", "image/png"), ("Date", "old")])
        let update: HTTPHeaders = ["cache-control": "max-age=600", "Date": "new", "Set-Cookie": "no", "ETag": "\"v1\""]
        let request = VaryRequest(headers: HTTPHeaders(), userAgent: "ua")
        let merged = Revalidation.merged(old, with: update, varyRequest: request, requestTime: 20, responseTime: 21)
        #expect(merged.headers == [CacheMetadata.Header("Content-Type", "image/png"),
                                   CacheMetadata.Header("cache-control", "max-age=600"), CacheMetadata.Header("Date", "new"),
                                   CacheMetadata.Header("ETag", "\"v1\"")])
        #expect(merged.requestTime == 20 && merged.responseTime == 21)
        // The body and what was learnt of it stay.
        #expect(merged.hasBody && merged.bodyLength == 42 && merged.bodyDigest == "abc" && merged.status == 200)
        #expect(merged.format == "png" && merged.width == 1 && merged.height == 2 && merged.url == old.url)
    }

    /// The merge a run makes: into a record read from the cache (its headers read in place), written back.
    /// Every field of a stored name replaces the stored ones in any case, a repeated one with all its lines;
    /// a field that is not stored (`Set-Cookie`, `X-Custom`) replaces nothing.
    @Test func a304MergesIntoARecordReadFromTheCacheAsIntoAList() throws {
        let old = stored([("ETag", "\"v1\""), ("Content-Language", "de"), ("Pragma", "no-cache"), ("Cache-Control", "max-age=60"),
                          ("X-Custom", "kept"), ("Content-Type", "image/png"), ("CACHE-CONTROL", "public")])
        let decoded = try #require(old.encoded().withUnsafeBytes { CacheMetadata.decode($0) })
        let update: HTTPHeaders = ["content-language": "en", "Cache-Control": "max-age=600", "Set-Cookie": "no",
                                   "X-Custom": "not stored", "cache-control": "immutable", "Connection": "keep-alive"]
        let request = VaryRequest(headers: HTTPHeaders(), userAgent: "ua")
        for meta in [old, decoded] {
            let merged = Revalidation.merged(meta, with: update, varyRequest: request, requestTime: 20, responseTime: 21)
            let expected: [CacheMetadata.Header] = [
                .init("ETag", "\"v1\""), .init("Pragma", "no-cache"), .init("X-Custom", "kept"), .init("Content-Type", "image/png"),
                .init("content-language", "en"), .init("Cache-Control", "max-age=600"), .init("cache-control", "immutable"),
            ]
            #expect(merged.headers == expected)
            #expect(merged.header("Cache-Control") == "max-age=600" && merged.header("content-language") == "en")
            let reread = try #require(merged.encoded().withUnsafeBytes { CacheMetadata.decode($0) })
            #expect(reread.headers == expected && reread.requestTime == 20 && reread.bodyLength == 42)
        }
    }

    @Test func a304WithoutAStoredHeaderChangesOnlyTheTimes() {
        let old = stored([("ETag", "\"v1\""), ("Date", "old")], varyRequest: [CacheMetadata.Header("accept", "image/png")])
        let update: HTTPHeaders = ["Server": "nginx", "Connection": "keep-alive"]
        let merged = Revalidation.merged(old, with: update, varyRequest: VaryRequest(headers: HTTPHeaders(), userAgent: "ua"),
                                         requestTime: 20, responseTime: 21)
        var expected = old
        expected.requestTime = 20
        expected.responseTime = 21
        #expect(merged == expected)
    }

    @Test func a304WithVaryRecordsTheRequestValuesAnew() {
        let old = stored([("Vary", "Accept")], varyRequest: [CacheMetadata.Header("accept", "image/png")])
        let request = VaryRequest(headers: ["Accept-Language": "de"], userAgent: "ua")
        let without = Revalidation.merged(old, with: ["Date": "d"], varyRequest: request,
                                          requestTime: 1, responseTime: 2)
        #expect(without.varyRequest == old.varyRequest, "no Vary in the 304: the recorded values stay")
        let with = Revalidation.merged(old, with: ["Vary": "Accept-Language, User-Agent"],
                                       varyRequest: request, requestTime: 1, responseTime: 2)
        #expect(with.varyRequest == [CacheMetadata.Header("accept-language", "de"), CacheMetadata.Header("user-agent", "ua")])
        #expect(with.header("Vary") == "Accept-Language, User-Agent")
    }
}
