@testable import DiskCache
import Testing

@Suite struct CacheFileNameTests {
    static let key = "0123456789abcdef0123456789abcdef"

    @Test func onlyOurNamesAreClassified() {
        #expect(CacheFileName(Self.key) == .body(Self.key))
        #expect(CacheFileName(Self.key + ".meta") == .metadata(Self.key))
        for foreign in ["", "notes.txt", ".tmp", Self.key.uppercased(), Self.key + ".metx", Self.key + ".meta.bak",
                        String(Self.key.dropLast()), Self.key + "0", "0123456789abcdef0123456789abcdeg", Self.key + ".json"] {
            #expect(CacheFileName(foreign) == nil, "\(foreign) must be foreign")
        }
    }

    /// `isKey` reads a key's 32 bytes a word at a time: every byte value at every place, against
    /// the bytes checked one by one.
    @Test func isKeyChecksEveryByteOfEveryPlace() {
        var mismatches: [String] = []
        for place in 0..<32 {
            for value in 0...255 {
                var bytes = Array(Self.key.utf8)
                bytes[place] = UInt8(value)
                let expected = bytes.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
                if bytes.withUnsafeBufferPointer(CacheFileName.isKey) != expected { mismatches.append("\(place): \(value)") }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        #expect(CacheFileName.isKey(Self.key) && CacheFileName.isKey("ffffffffffffffffffffffffffffffff"))
        #expect(!CacheFileName.isKey(Self.key + "0") && !CacheFileName.isKey(String(Self.key.dropLast())))
    }

    @Test func temporaryNamesCarryKeyAndPid() throws {
        let body = try #require(TemporaryFileName(Self.key + ".4242.7"))
        #expect(body.key == Self.key && body.pid == 4242 && !body.isMetadata)
        let meta = try #require(TemporaryFileName(Self.key + ".17.3.meta"))
        #expect(meta.pid == 17 && meta.isMetadata)
        for foreign in [Self.key, Self.key + ".x.1", Self.key + ".1", Self.key + ".1.2.3", Self.key + ".-1.2", Self.key + ".0.2",
                        "abc.1.2", Self.key + ".1.2.tmp", "partial-download.bin"] {
            #expect(TemporaryFileName(foreign) == nil, "\(foreign) must be foreign")
        }
    }

    /// The allocation-free check must agree with the full normalisation on every URL.
    @Test(arguments: [
        "https://example.com/a.png", "HTTPS://example.com/a.png", "https://Example.com/a.png", "https://example.com:443/a",
        "http://example.com:80/a", "http://example.com:443/a", "https://example.com:8443/a", "https://example.com/a#frag",
        "https://example.com/a?q=1#f", "https://u:P@Example.com/a", "https://U:P@example.com/A?B=C", "http://[::1]:80/a",
        "http://[::1]/a", "https://example.com", "https://example.com?x", "https://example.com:/a", "https://ex:ample.com:1/a",
        "https://bücher.example/a", "https://example.com/ä?#", "http://host:12ab/x", "http://@host/x", "http://user@/x",
        "a://b", "http://h/p:80", "http://h?x#y", "http://h/p@q/r", "http://H", "ftp://example.com/a",
    ])
    func fastPathAgreesWithFullNormalisation(url: String) {
        let full = try? CacheKey.normalizeFully(url)
        let fast = try? CacheKey.normalize(url)
        #expect(fast == full)
        if CacheKey.isNormalized(url) { #expect(full == url) }
    }

    /// The same agreement over every URL made of these pieces: user info with
    /// and without '@', ':' and uppercase, hosts in any case or not ASCII,
    /// ports default or not, with a leading zero or a letter, fragments.
    @Test func fastPathAgreesOnEveryCombinationOfPieces() {
        let schemes = ["http", "https", "HTTP", "ftp"]
        let users = ["", "u@", "U:P@", "a@b@", "u:@", ":p@", "ü@"]
        let hosts = ["h", "H", "host.Example", "bü", "[::1]", "", "a:b", "127.0.0.1"]
        let ports = ["", ":", ":80", ":443", ":080", ":8443", ":1a", ":0"]
        let rests = ["", "/", "/p", "/P?Q", "?x", "/a#f", "#f", "/a@b:c"]
        var checked = 0
        for scheme in schemes { for user in users { for host in hosts { for port in ports { for rest in rests {
            let url = scheme + "://" + user + host + port + rest
            let full = try? CacheKey.normalizeFully(url)
            #expect((try? CacheKey.normalize(url)) == full, "\(url)")
            if CacheKey.isNormalized(url) { #expect(full == url, "\(url)") }
            checked += 1
        } } } } }
        #expect(checked == 14_336)
    }
}
