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
    }

    /// libcurl reads a port as a number, so ":080" asks for port 80: the same
    /// resource as no port at all, and the same cache entry. Other ports stay
    /// as written.
    @Test func aDefaultPortWithLeadingZerosIsTheDefaultPort() throws {
        #expect(try CacheKey.normalize("http://h:080/x") == "http://h/x")
        #expect(try CacheKey.normalize("https://H:00443/x#f") == "https://h/x")
        #expect(try CacheKey(url: "http://h:080/x").hex == CacheKey(url: "http://h/x").hex)
        #expect(try CacheKey.normalize("http://h:0/x") == "http://h:0/x")
        #expect(try CacheKey.normalize("http://h:08080/x") == "http://h:08080/x")
        #expect(try CacheKey.normalize("https://h:080/x") == "https://h:080/x")
    }

    @Test func malformedAuthoritiesAreRefused() {
        #expect(throws: DiskCacheError.self) { try CacheKey.normalize("http://h:8x/") }
        #expect(throws: DiskCacheError.self) { try CacheKey.normalize("http://[::1/") }
        #expect(throws: DiskCacheError.self) { try CacheKey.normalize("http:///x") }
        #expect(throws: DiskCacheError.self) { try CacheKey.normalize("x:/y") }
    }
}
