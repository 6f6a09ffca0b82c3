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
        "http://h:65535/", "http://h:65536/", "http://h:99999/x", "http://h:123456/", "http://h:1:80/", "http://h:0/",
        "http://h:8o/", "http://[::1]:80x/", "http://u:p@h:81/x", "http://u:p:q@h/", "http://h:80",
        "http://a@h:99999@h:9/x", "http://a@b:1@c/",
    ]

    @Test(arguments: tricky)
    func theFastPathAcceptsOnlyWhatTheFullCheckAccepts(url: String) {
        if FetchClient.isPlainlyValid(url) {
            #expect(throws: Never.self) { try FetchClient.validateFully(url) }
        }
    }

    @Test func portsAreCheckedBeforeAnyIO() throws {
        for url in ["http://127.0.0.1:99999/x", "http://h:65536/", "http://h:1:80/x", "http://[::1]:80x/", "http://h:8o/",
                    "http://[::1]x/", "http://h:0/", "http://127.0.0.1:00000/x",
                    "http://a@127.0.0.1:99999@127.0.0.1:9/x"] {   // libcurl ends the user info at the first '@'

            #expect(!FetchClient.isPlainlyValid(url), "\(url)")
            #expect(throws: FetchError.self, "\(url)") {
                do { try FetchClient.validateFully(url) } catch let error as FetchError {
                    #expect(error.kind == .invalidURL, "\(url): \(error.kind)")
                    throw error
                }
            }
        }
        for url in ["http://h:65535/", "http://h:/x", "http://[::1]:8080/", "http://u:p@h:81/x"] {
            #expect(throws: Never.self, "\(url)") { try FetchClient.validate(url) }
        }
    }

    /// A scheme written without "//" is still a scheme that is not fetched;
    /// a host and port without a scheme is a malformed URL.
    @Test func schemesWithoutSlashesAreUnsupportedNotMalformed() throws {
        for (url, kind) in [("mailto:someone@example.com", FetchError.Kind.unsupportedScheme),
                            ("data:image/png;base64,AAAA", .unsupportedScheme), ("javascript:alert(1)", .unsupportedScheme),
                            ("tel:5551234", .unsupportedScheme), ("sip:1234@h", .unsupportedScheme),
                            ("example.com:8080/x.png", .invalidURL), ("localhost:80", .invalidURL),
                            ("example.com:/x.png", .invalidURL), ("C:\\x.png", .invalidURL),
                            ("http:example.com/x.png", .invalidURL), ("just text", .invalidURL)] {
            #expect(throws: FetchError.self, "\(url)") {
                do { try FetchClient.validate(url) } catch let error as FetchError {
                    #expect(error.kind == kind, "\(url): \(error.kind)")
                    throw error
                }
            }
        }
    }

    @Test func theUsualURLsTakeTheFastPath() {
        for url in ["http://127.0.0.1:34427/small/s000001.png", "https://example.com/a/b.jpg?size=2",
                    "HTTPS://User:secret@Example.com/x", "http://h"] {
            #expect(FetchClient.isPlainlyValid(url), "\(url)")
        }
    }
}
