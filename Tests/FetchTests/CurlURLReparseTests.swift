import CCurl
import Testing

/// A handle's next URL of the scheme and authority it last parsed whole has only its path and
/// query set in libcurl's parse (`ccurl_url_parse`), when libcurl's whole parse would keep them
/// byte for byte. Every part libcurl reads (each with each flag) must then be what parsing the
/// whole URL gives, and any other URL must be parsed whole.
@Suite struct CurlURLReparseTests {
    /// No scheme-less one: `FetchClient.validate` refuses those before libcurl (parsed into a
    /// handle that holds a URL, libcurl would read one as relative to it).
    private static let origins = [
        "http://127.0.0.1:8080", "http://127.0.0.1", "http://localhost", "http://Example.COM", "http://h:0080",
        "http://127.1", "http://0x7f.1:80", "https://user:pw@h:443", "http://u@h", "http://u:p;o@h",
        "http://[::1]:80", "http://[fe80::1%25eth0]", "http://h:", "https://xn--nxasmq6b.example",
        "HTTP://upper.example", "http:///three.example", "ftp://f.example", "http://h%41.example",
        "http://b\u{e9}.example", "http://bad host", "http://h:99999", "http://",
    ]
    private static let tails = [
        "", "/", "/a.png", "/small/s000123.png", "/a?b=c&d=e", "/a?", "/?q", "?q", "#f", "/a#f", "/a?x#f",
        "/a/../b", "/./x", "/x/.", "/x/..", "/.well-known/x", "/a./b", "/a%2Fb", "/a%2fb", "/a?x=%4A",
        "/a b", "/a\tb", "/\u{e9}.png", "/a?\u{e9}", "//double//slash", "/a?b/../c", "/a?b#", "/~u/+x;y=z,(a)!*'$@:",
        "/a?x=1?y=2", "/" + String(repeating: "p", count: 3000) + "?q", "/" + String(repeating: "p", count: 3000),
    ]

    private static func check(_ first: String, _ next: String) -> Int32 { ccurl_url_reparse_check(first, next) }

    @Test func aPathAndQuerySetAreTheWholeParse() throws {
        try #require(ccurl_global_init() == CURLE_OK)
        var mismatches: [String] = [], kept = 0
        for origin in Self.origins {
            for before in ["/before.png", "/b?x=1#frag", "/", "?q#f"] {
                for tail in Self.tails {
                    let result = Self.check(origin + before, origin + tail)
                    if result == 0 || result == -1 { mismatches.append("\(origin + before) -> \(origin + tail): \(result)") }
                    if result == 2 { kept += 1 }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count): \(mismatches.prefix(8))")
        #expect(kept > 300, "the path and query were set alone \(kept) times")
    }

    @Test func aPlainPathAndQueryAreSetAloneAndNothingElseIs() throws {
        try #require(ccurl_global_init() == CURLE_OK)
        let origin = "http://127.0.0.1:8080"
        for tail in ["/", "/a.png", "/small/s000123.png", "/a?b=c&d=e", "/a?", "/?q", "//double//slash", "/a./b",
                     "/a?b/../c", "/a?x=1?y=2", "/~u/+x;y=z,(a)!*'$@:"] {
            #expect(Self.check(origin + "/first?x#f", origin + tail) == 2, "\(tail)")
        }
        // A different scheme or authority, or what the parse changes or refuses: parsed whole.
        for next in ["http://127.0.0.1:8081/a.png", "http://127.0.0.1/a.png", "https://127.0.0.1:8080/a.png",
                     "http://127.0.0.1:80800/a.png", "http://127.0.0.1:8080", "http://127.0.0.1:8080?q",
                     "http://127.0.0.1:8080/a%2Fb", "http://127.0.0.1:8080/x/../a", "http://127.0.0.1:8080/./a",
                     "http://127.0.0.1:8080/a#f", "http://127.0.0.1:8080/a b", "http://127.0.0.1:8080/\u{e9}",
                     "http://127.0.0.1:8080/a?x=%41"] {
            #expect(Self.check(origin + "/first", next) == 1, "\(next)")
        }
        // After a URL libcurl refuses, or one not parsed from a plain origin, the next is parsed whole.
        #expect(Self.check("http://bad host/a", "http://bad host/b") == 1)
        #expect(Self.check("HTTP://h/a", "HTTP://h/b") == 1)
        #expect(Self.check("http:///h/a", "http:///h/b") == 1)
    }

    /// Tails of bytes drawn from those the parse treats apart, after random firsts.
    @Test func generatedTailsParseAsWhole() throws {
        try #require(ccurl_global_init() == CURLE_OK)
        let alphabet = Array("/?#%.aZ09-_~+=&;: \t\u{7f}\u{e9}2F").map(String.init)
        var generator = SystemRandomNumberGenerator()
        var mismatches: [String] = []
        for _ in 0..<3000 {
            let origin = Self.origins.randomElement(using: &generator)!
            func tail() -> String {
                "/" + (0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }.joined()
            }
            let first = origin + tail(), next = origin + tail()
            if Self.check(first, next) <= 0 { mismatches.append("\(first) -> \(next)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count): \(mismatches.prefix(8))")
    }

    /// The executable's `curl_url_get` (CCurl.c), which libcurl calls for every transfer's parts,
    /// answers as libcurl's own for every part and flag: a plain path without the byte-at-a-time
    /// encoding copy, any other path (a space, a byte past ASCII, empty) as libcurl does.
    @Test func theExecutablesPartsAreLibcurls() throws {
        try #require(ccurl_global_init() == CURLE_OK)
        var mismatches: [String] = []
        for origin in ["http://127.0.0.1:8080", "https://u:p@h.example", "http://[::1]"] {
            for tail in Self.tails where ccurl_url_get_mismatches(origin + tail, nil) > 0 {
                mismatches.append(origin + tail)
            }
        }
        // Paths the whole parse never leaves, set as parts: spaces, controls, bytes past ASCII, none.
        for path in ["", "/", "a", "/a b", " ", "/a\tb", "/\u{e9}", "/a?b", "/%41 %", "/a+b", "/\u{7f}", "/~!$&'()*+,;=:@"]
        where ccurl_url_get_mismatches("http://h/x", path) != 0 {
            mismatches.append("path \(path)")
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }
}
