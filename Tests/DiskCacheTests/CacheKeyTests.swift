@testable import DiskCache
import Foundation
import Synchronization
import Testing
import TestSupport

/// Known vectors: each expected key was computed with `printf %s URL | md5sum`.
@Suite struct CacheKeyTests {
    @Test(arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("http://127.0.0.1:8765/images/red-64x48.png", "6598c610e73083ca0e78e77cb2aa01b4"),
        ("The quick brown fox jumps over the lazy dog", "9e107d9d372bb6826bd81d3542a419d6"),
        // RFC 1321's test suite (appendix A.5): one, two and several blocks.
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
        (String(repeating: "1234567890", count: 8), "57edf4a22be3c955ac49da2e2107b67a"),
    ])
    func md5MatchesKnownVectors(input: String, expected: String) {
        #expect(MD5.hex(input) == expected)
        #expect(MD5.hex(Array(input.utf8)) == expected)
    }

    /// Hex four bytes at a time: every byte value in every place of a group,
    /// and the lengths that leave a tail, as a byte loop writes them.
    @Test func hexOfEveryByteInEveryPlace() {
        func slow(_ bytes: [UInt8]) -> String {
            bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
        for shift in 0..<4 {
            let bytes = (0..<256).map { UInt8(($0 + shift) % 256) }
            #expect(MD5.hexString(bytes) == slow(bytes), "shift \(shift)")
        }
        for length in 0...9 {
            let bytes = (0..<length).map { UInt8(0xF0 &+ UInt8($0) &* 37) }
            #expect(MD5.hexString(bytes) == slow(bytes), "length \(length)")
        }
    }

    /// A key is its digest: the digits it writes on the stack (for a file's
    /// name and a result line) are the key's text, every byte value in every
    /// place of both words; the text reads back as the same digest; nothing
    /// but 32 lowercase hex digits does.
    @Test func aDigestSpellsItsKeyAndReadsBack() throws {
        func slow(_ bytes: [UInt8]) -> String {
            bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        }
        for start in 0..<256 {
            let bytes = (0..<16).map { UInt8((start + $0 * 17) % 256) }
            let key = slow(bytes)
            let digest = try #require(MD5.Digest(hex: key))
            #expect(digest.hex == key)
            digest.withHex { digits, cName in
                #expect(String(decoding: digits, as: UTF8.self) == key)
                #expect(String(cString: cName) == key)
            }
        }
        for url in ["", "abc", "https://x.test/a.png"] {
            let digest = MD5.digest(url)
            #expect(digest.hex == MD5.hex(url))
            #expect(MD5.Digest(hex: MD5.hex(url)) == digest)
            #expect(try CacheKey(url: "https://x.test/a.png").hex == MD5.hex("https://x.test/a.png"))
        }
        let key = MD5.hex("abc")
        for bad in [key.uppercased(), String(key.dropLast()), key + "0", String(key.dropLast()) + "g", "", String(repeating: " ", count: 32)] {
            #expect(MD5.Digest(hex: bad) == nil, "\(bad)")
        }
    }

    /// Digits are read eight at a time: every byte value at every one of the
    /// 32 places reads as the digit it is, or refuses the whole text.
    @Test func everyByteAtEveryPlaceOfAKeyIsADigitOrRefused() throws {
        let key = Array(MD5.hex("https://x.test/a.png").utf8)
        let hexDigits = Array("0123456789abcdef".utf8)
        for place in 0..<32 {
            for value in 0...255 {
                var text = key
                text[place] = UInt8(value)
                let digest = text.withUnsafeBufferPointer { MD5.Digest(hex: $0) }
                if let index = hexDigits.firstIndex(of: UInt8(value)) {
                    let expected = key.enumerated().map { $0.offset == place ? hexDigits[index] : $0.element }
                    #expect(digest?.hex == String(decoding: expected, as: UTF8.self), "\(value) at \(place)")
                } else {
                    #expect(digest == nil, "\(value) at \(place)")
                }
            }
        }
    }

    /// The streaming digest, fed in pieces that start and end anywhere in a
    /// 64-byte block, equals the one-shot digest (vector from Python's hashlib).
    @Test func streamingMD5MatchesOneShotAcrossBlockBoundaries() throws {
        let bytes = (0..<1000).map { UInt8($0 * 31 % 251) }
        #expect(MD5.hex(bytes) == "d676565de2976219305a8e7e6698b024")
        for piece in [1, 7, 55, 56, 63, 64, 65, 128, 999] {
            let md5 = try StreamingMD5()
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + piece)
                bytes[start..<end].withUnsafeBytes { md5.update($0) }
                start = end
            }
            #expect(md5.finalize() == "d676565de2976219305a8e7e6698b024", "pieces of \(piece)")
            #expect(md5.finalize() == "d41d8cd98f00b204e9800998ecf8427e", "starts over after finalize")
        }
    }

    @Test func md5MatchesTheSystemMd5sum() throws {
        let urls = ["https://example.com/a.png", "http://h/ünïcode?q=1&r=2", "https://x.test/" + String(repeating: "p", count: 3000)]
        for url in urls {
            let md5sum = try runProcess("/usr/bin/md5sum", [], stdin: Array(url.utf8))
            let expected = md5sum.stdout.prefix(32)
            #expect(try CacheKey(url: url).hex == String(expected))
        }
    }

    /// One-shot digests reuse a context per thread: threads hashing at once
    /// must not mix their inputs, and new threads start clean.
    @Test func md5FromManyThreadsAtOnce() {
        let inputs = (0..<400).map { "https://x.test/\($0)/" + String(repeating: "p", count: $0) }
        let expected = inputs.map { MD5.hex($0) }
        #expect(Set(expected).count == inputs.count && expected[0] == MD5.hex(Array(inputs[0].utf8)))
        let mismatches = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<5 {
                for i in inputs.indices where (i + worker + round) % 3 != 0 && MD5.hex(inputs[i]) != expected[i] {
                    mismatches.withLock { $0 += 1 }
                }
            }
        }
        #expect(mismatches.withLock { $0 } == 0)
    }

    @Test func streamingMD5EqualsOneShot() throws {
        let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let streaming = try StreamingMD5()
        var offset = 0
        for size in [1, 7, 4096, 30_000, 65_896] {
            bytes[offset..<offset + size].withUnsafeBytes { streaming.update($0) }
            offset += size
        }
        #expect(offset == bytes.count)
        #expect(streaming.finalize() == MD5.hex(bytes))
    }

    @Test(arguments: [
        ("HTTP://Example.COM/Path/IMG.png", "http://example.com/Path/IMG.png"),
        ("https://example.com:443/a.png", "https://example.com/a.png"),
        ("http://example.com:80/a.png", "http://example.com/a.png"),
        ("http://example.com:443/a.png", "http://example.com:443/a.png"),
        ("https://example.com:8443/a.png", "https://example.com:8443/a.png"),
        ("https://example.com/a.png#frag", "https://example.com/a.png"),
        ("https://example.com/a.png?Q=Upper#x", "https://example.com/a.png?Q=Upper"),
        ("https://User:Pw@Example.com/a", "https://User:Pw@example.com/a"),
        ("http://[::1]:80/a", "http://[::1]/a"),
        ("http://[::1]:8080/a", "http://[::1]:8080/a"),
        ("https://example.com", "https://example.com"),
        ("https://example.com/%7Euser/a%20b.png", "https://example.com/%7Euser/a%20b.png"),
    ])
    func normalisation(input: String, expected: String) throws {
        #expect(try CacheKey.normalize(input) == expected)
    }

    @Test func normalisedFormsShareAKey() throws {
        #expect(try CacheKey(url: "HTTPS://EXAMPLE.com:443/x.png#top").hex == (try CacheKey(url: "https://example.com/x.png").hex))
    }

    @Test(arguments: ["example.com/a.png", "://x", "http://", "http:///path", "http://host:12ab/x", "http://[::1/x"])
    func malformedURLsAreRejected(input: String) {
        #expect(throws: DiskCacheError.self) { try CacheKey.normalize(input) }
    }
}
