import DiskCache
import Fetch
import HTTPCaching
import Testing

/// The request side of `Vary` (RFC 9111 §4.1), without I/O.
@Suite struct VaryRequestTests {
    func stored(vary: String?, request: [(String, String)], language: String? = nil) -> CacheMetadata {
        var headers: [CacheMetadata.Header] = []
        if let vary { headers.append(CacheMetadata.Header("Vary", vary)) }
        if let language { headers.append(CacheMetadata.Header("Content-Language", language)) }
        return CacheMetadata(url: "https://x.test/a", status: 200, requestTime: 0, responseTime: 0, headers: headers,
                             varyRequest: request.map { CacheMetadata.Header($0.0, $0.1) })
    }

    @Test func theValueSentIsTheCombinedHeaderElseLibcurlsDefault() {
        let request = VaryRequest(headers: ["Accept-Language": "en", "accept-language": "DE"], userAgent: "ua/1")
        #expect(request.value("Accept-Language", url: "https://x.test/a") == "de, en")
        #expect(request.value("User-Agent", url: "https://x.test/a") == "ua/1")
        #expect(request.value("Accept", url: "https://x.test/a") == "*/*")
        #expect(request.value("Accept-Encoding", url: "https://x.test/a") == "br, deflate, gzip, zstd", "Fetch's offer, sent unless -H replaces it")
        #expect(request.value("X-Other", url: "https://x.test/a") == "")
        #expect(VaryRequest.names(" Accept ,,USER-agent,") == ["accept", "user-agent"])
    }

    /// `-H 'Accept:'` (removed) sends no Accept, not libcurl's `*/*`; `-H 'X;'` sends "".
    @Test func aRemovedHeaderIsNotSentAndAnEmptyOneIsEmpty() {
        let request = VaryRequest(headers: ["X-Empty": ""], userAgent: "ua",
                                  removedHeaders: ["accept", "User-Agent", "Accept-Encoding"])
        #expect(request.value("Accept", url: "https://x.test/a") == "")
        #expect(request.value("Accept-Encoding", url: "https://x.test/a") == "")
        #expect(request.value("User-Agent", url: "https://x.test/a") == "")
        #expect(request.value("X-Empty", url: "https://x.test/a") == "")
        #expect(!request.matches(stored(vary: "Accept", request: [("accept", "*/*")])))
        #expect(!request.matches(stored(vary: "User-Agent", request: [("user-agent", "ua")])))
        #expect(request.matches(stored(vary: "Accept, User-Agent, X-Empty", request: [("accept", ""), ("user-agent", "")])))
        #expect(VaryRequest(headers: HTTPHeaders(), userAgent: "").value("User-Agent", url: "https://x.test/a") == "", "an empty User-Agent is none")
    }

    /// A `Vary` with no names in it (empty, only commas or spaces, on one
    /// line or several) lists nothing to match (RFC 9110 §12.5.5's list
    /// rules): reused like a response without `Vary`, whatever the request
    /// sends, and nothing recorded beside it.
    @Test func aVaryThatNamesNothingIsReusedLikeNoVary() {
        let requests = [VaryRequest(headers: HTTPHeaders(), userAgent: "ua"),
                        VaryRequest(headers: ["Accept": "image/webp", "X-A": "1"], userAgent: "other")]
        for vary in [nil, "", " ", ",", ", ,", " ,\t, "] {
            for request in requests {
                #expect(request.matches(stored(vary: vary, request: [])), "\(vary.debugDescription)")
                #expect(request.values(for: HTTPHeaders(vary.map { [HTTPHeaders.Field(name: "Vary", value: $0)] } ?? []), url: "https://x.test/a").isEmpty, "\(vary.debugDescription)")
            }
        }
        #expect(requests[1].values(for: ["Vary": "", "Vary": ", "], url: "https://x.test/a").isEmpty)
    }

    @Test func theValuesStoredAreThoseTheVaryNames() {
        let request = VaryRequest(headers: ["Accept": "image/webp"], userAgent: "ua")
        #expect(request.values(for: ["Vary": "Accept, *", "Vary": "X-Missing"], url: "https://x.test/a") ==
                [CacheMetadata.Header("accept", "image/webp"), CacheMetadata.Header("x-missing", "")])
        #expect(request.values(for: HTTPHeaders(), url: "https://x.test/a").isEmpty)
    }

    /// Credentials a `Vary` names are kept as a digest, never as sent, and
    /// still answer only the same credential.
    @Test func credentialsAreStoredAndMatchedAsADigest() {
        let request = VaryRequest(headers: ["Authorization": "Bearer s3cret", "Cookie": "a=1"], userAgent: "ua")
        let vary = "Authorization, Cookie, Proxy-Authorization"
        let values = request.values(for: ["Vary": vary], url: "https://x.test/a")
        #expect(values == [CacheMetadata.Header("authorization", "md5 " + MD5.hex("Bearer s3cret")),
                           CacheMetadata.Header("cookie", "md5 " + MD5.hex("a=1")),
                           CacheMetadata.Header("proxy-authorization", "")])
        let entry = stored(vary: vary, request: values.map { ($0.name, $0.value) })
        #expect(request.matches(entry))
        #expect(!VaryRequest(headers: ["Authorization": "Bearer other", "Cookie": "a=1"], userAgent: "ua").matches(entry))
        #expect(!VaryRequest(headers: ["Cookie": "a=1"], userAgent: "ua").matches(entry))
    }

    @Test func aStoredResponseAnswersOnlyTheSameNormalisedValues() {
        let request = VaryRequest(headers: ["Accept-Language": "de ;q=1.0, en;q=0.5"], userAgent: "ua")
        #expect(request.matches(stored(vary: nil, request: [])))
        #expect(request.matches(stored(vary: "accept-language", request: [("accept-language", "EN;q=0.5,de")])))
        #expect(!request.matches(stored(vary: "Accept-Language", request: [("accept-language", "fr")])))
        #expect(!request.matches(stored(vary: "*", request: [])), "Vary: * never matches")
        #expect(request.matches(stored(vary: "Accept-Language", request: [("accept-language", "fr")], language: "de")),
                "the first choice is the language the server chose")
        #expect(request.matches(stored(vary: "User-Agent, Accept", request: [("user-agent", "ua"), ("accept", "*/*")])))
        #expect(!request.matches(stored(vary: "User-Agent", request: [("user-agent", "other")])))
    }

    /// RFC 9111 §4.1 with `Vary: Host`: libcurl always sends a Host, the
    /// URL's host and port unless `-H` replaces it; compared without case.
    @Test func hostIsTheURLsAuthorityUnlessAHeaderReplacesIt() {
        let request = VaryRequest(headers: HTTPHeaders(), userAgent: "ua")
        #expect(request.value("Host", url: "http://ann@x.test:8080/a?b@c") == "x.test:8080")
        #expect(request.value("host", url: "https://[::1]/a") == "[::1]")
        #expect(request.values(for: ["Vary": "Host"], url: "https://x.test/a") == [CacheMetadata.Header("host", "x.test")])
        #expect(request.matches(stored(vary: "Host", request: [("host", "x.test")])))
        #expect(!request.matches(stored(vary: "Host", request: [("host", "")])), "stored for a request that replaced it")
        let named = VaryRequest(headers: ["Host": "X.Test"], userAgent: "ua")
        #expect(named.matches(stored(vary: "Host", request: [("host", "x.test")])), "the same host, named with -H")
        #expect(!VaryRequest(headers: ["Host": "y.test"], userAgent: "ua")
            .matches(stored(vary: "Host", request: [("host", "x.test")])))
    }
}
