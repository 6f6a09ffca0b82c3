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
            // What a prepared request keeps (read from the URL's bytes in one pass) is the same.
            let kept = TransferOrigin(url: url)
            #expect(kept.homeHash == TransferLoops.homeHash(Substring(hostPort)), "\(url)")
            #expect(kept.multiplexingHost == (secure ? Substring(hostPort) : nil), "\(url)")
        }
        for url in ["ftp://a.test/", "http:/a.test", "http://", "https://", "", "httpx://a.test/", "file:///x"] {
            #expect(TransferLoops.origin(of: url) == nil, "\(url)")
            #expect(TransferOrigin(url: url).homeHash == nil && TransferOrigin(url: url).multiplexingHost == nil, "\(url)")
        }
    }

    /// The home-loop hash is FNV-1a over "host:port", its high bits folded in: the same in every
    /// process and build (hosts spread over loops and TLS shares by it).
    @Test func theHomeHashIsFNV1aOfHostAndPort() {
        let basis: UInt64 = 0xCBF2_9CE4_8422_2325
        #expect(TransferLoops.homeHash("") == basis ^ (basis >> 32))
        var hash = basis
        for byte in "127.0.0.1:8080".utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        #expect(TransferLoops.homeHash("127.0.0.1:8080") == hash ^ (hash >> 32))
        #expect(TransferLoops.homeHash("x127.0.0.1:8080".dropFirst()) == hash ^ (hash >> 32))
    }
}
