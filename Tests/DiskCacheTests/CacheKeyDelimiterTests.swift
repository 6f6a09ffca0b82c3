import DiskCache
import Testing

/// Found by the `url` fuzz target (issue 14): a "/" followed by a combining
/// mark is one `Character` but still the "/" that ends the host.
@Suite struct CacheKeyDelimiterTests {
    @Test func aCombiningMarkAfterTheSlashLeavesThePathAlone() throws {
        let url = "http://H/\u{33F}A/B"
        #expect(try CacheKey.normalize(url) == "http://h/\u{33F}A/B")
        #expect(try CacheKey(url: "http://h/\u{33F}A/B") != CacheKey(url: "http://h/\u{33F}a/B"),
                "two paths that differ in case share an entry")
    }

    @Test func theFuzzerInputNormalisesOnceAndForAll() throws {
        let url = "http://tt:/\u{33F}http://tt:/\u{33F}"
        let once = try CacheKey.normalize(url)
        #expect(once == "http://tt/\u{33F}http://tt:/\u{33F}")   // an empty port is the default one
        #expect(try CacheKey.normalize(once) == once)
    }

    @Test func theUsualFormsStillNormalise() throws {
        #expect(try CacheKey.normalize("HTTP://User:Pw@Example.COM:80/A?B#C") == "http://User:Pw@example.com/A?B")
        #expect(try CacheKey.normalize("https://[::1]:443/x") == "https://[::1]/x")
        #expect(try CacheKey.normalize("https://[::1]:8443/x#y") == "https://[::1]:8443/x")
        #expect(try CacheKey.normalize("http://h:/x") == "http://h/x")
        #expect(throws: DiskCacheError.self) { try CacheKey.normalize("http://h:8x/") }
        #expect(throws: DiskCacheError.self) { try CacheKey.normalize("http://[::1/") }
        #expect(throws: DiskCacheError.self) { try CacheKey.normalize("http:///x") }
        #expect(throws: DiskCacheError.self) { try CacheKey.normalize("x:/y") }
    }
}
