@testable import Fetch
import Testing

/// `validate`'s fast path must never accept what the full check rejects,
/// and must take the usual URLs (or it saves nothing).
@Suite struct PlainURLTests {
    static let tricky = [
        "http://h/", "HTTPS://H:8443/p?q#f", "http://u:p@h/x", "http://@h/", "http://u@:80/", "http://:80/",
        "http:///path", "http://", "https://", "http:/h/", "http//h", "httpx://h/", "htp://h", "https:/",
        "http://h/a b", "http://h/\u{7F}", "http://h\t/", "ftp://h/", "file:///etc/passwd", "http://a@b@c/",
        "http://[::1]:80/", "http://h?x", "http://h#x", "http://@", "http://h:", "Http://é.test/ü",
        "sttp://h/", "https\u{0}://h/", "",
    ]

    @Test(arguments: tricky)
    func theFastPathAcceptsOnlyWhatTheFullCheckAccepts(url: String) {
        if FetchClient.isPlainlyValid(url) {
            #expect(throws: Never.self) { try FetchClient.validateFully(url) }
        }
    }

    @Test func theUsualURLsTakeTheFastPath() {
        for url in ["http://127.0.0.1:34427/small/s000001.png", "https://example.com/a/b.jpg?size=2",
                    "HTTPS://User:secret@Example.com/x", "http://h"] {
            #expect(FetchClient.isPlainlyValid(url), "\(url)")
        }
    }
}
