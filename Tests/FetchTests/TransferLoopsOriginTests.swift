@testable import Fetch
import Testing

/// `TransferLoops.origin(of:)`: the scheme and "host:port" that place a
/// transfer on its host's home loop (SPEC §6) and key the hosts still connecting.
@Suite struct TransferLoopsOriginTests {
    @Test func theAuthorityIsReadAsWrittenWithoutUserInfo() {
        let cases: [(String, Bool, String)] = [
            ("http://a.test/x.png", false, "a.test"),
            ("https://b.test:8443/x", true, "b.test:8443"),
            ("HTTPS://B.test?q=1", true, "B.test"),
            ("hTTp://c.test#f", false, "c.test"),
            ("https://user:pw@d.test:1/p", true, "d.test:1"),
            ("http://u@v@e.test/", false, "e.test"),
            ("http://f.test", false, "f.test"),
            ("http://é.test/ü", false, "é.test"),
            ("http://[::1]:8080/", false, "[::1]:8080"),
            ("https://g.test/a@b", true, "g.test"),
        ]
        for (url, secure, hostPort) in cases {
            let origin = TransferLoops.origin(of: url)
            #expect(origin?.secure == secure && origin?.hostPort == Substring(hostPort), "\(url)")
        }
        for url in ["ftp://a.test/", "http:/a.test", "http://", "https://", "", "httpx://a.test/", "file:///x"] {
            #expect(TransferLoops.origin(of: url) == nil, "\(url)")
        }
    }
}
