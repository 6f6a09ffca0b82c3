import DiskCache
import Fetch
import Loader
import HTTPCaching
import PropertyBased
import Testing
import TestSupport

/// Random and hostile input for every parser that meets bytes from the
/// network or the disk (the image parsers' own are in ImageFormatsTests'
/// `ImageParserPropertyTests`). Each runs over `GuardedMemory`, so reading a
/// single byte outside the buffer crashes the test run instead of passing quietly.
@Suite(.timeLimit(.minutes(3))) struct ParserPropertyTests {
    static let directiveWords = [
        "max-age", "MAX-AGE", "no-store", "no-cache", "must-revalidate", "private", "s-maxage", "=", "=\"", "\"", ",", ", ",
        " ", "\t", "\\", "0", "60", "-1", "99999999999999999999999999", "abc", "\u{0}", "é", "🙂", ";", "==",
    ]

    @Test func cacheControlParsingNeverFailsAndIsConsistent() async {
        let words = Gen<String?>.element(of: Self.directiveWords).map { $0 ?? "" }
        await propertyCheck(count: 1000, input: words.array(of: 0...24)) { parts in
            let value = parts.joined()
            let cc = CacheControl([value])
            #expect(!(cc.maxAge != nil && cc.maxAgeInvalid), "a max-age is either valid or invalid")
            if let maxAge = cc.maxAge { #expect(maxAge >= 0) }
            #expect(CacheControl([value, value]) == cc, "repeating the field changes nothing")
        }
    }

    @Test func cacheControlSplitsFieldsLikeCommas() async {
        let directive = Gen<String?>.element(of: [
            "max-age=5", "max-age=70", "max-age=x", "no-store", "no-cache", "must-revalidate", "private", "community=\"a,b\"",
        ]).map { $0 ?? "" }
        await propertyCheck(count: 300, input: directive.array(of: 0...6)) { directives in
            #expect(CacheControl(directives) == CacheControl([directives.joined(separator: ", ")]))
            if let first = directives.first(where: { $0.hasPrefix("max-age") }) {
                let cc = CacheControl(directives)
                #expect(first == "max-age=x" ? cc.maxAgeInvalid : cc.maxAge == Int(first.dropFirst(8)))
            }
        }
    }

    @Test func httpDatesRoundTripAndGarbageIsNil() async {
        await propertyCheck(count: 500, input: Gen.int(in: 0...253_402_300_799)) { seconds in
            let text = HTTPDate.format(Double(seconds))
            #expect(HTTPDate.parse(text) == Double(seconds), "\(text)")
        }
        let chars = Gen<String?>.element(of: ["Sun", ",", " ", "06", "Nov", "1994", ":", "-", "GMT", "99", "x", "\u{0}", "🙂", "60", "-1"])
            .map { $0 ?? "" }
        await propertyCheck(count: 1000, input: chars.array(of: 0...14)) { parts in
            if let parsed = HTTPDate.parse(parts.joined()) {
                #expect(parsed >= -2_208_988_800 && parsed <= 253_402_300_800)   // 1900...9999
            }
        }
        await propertyCheck(count: 300, input: Gen.latin1.string(of: 0...40)) { text in
            _ = HTTPDate.parse(text)
        }
    }

    @Test func freshnessIsMonotonicInTime() async {
        let header = Gen<String?>.element(of: [
            "Cache-Control: max-age=100", "Cache-Control: max-age=x", "Cache-Control: no-cache", "Age: 50", "Age: junk",
            "Expires: 0", "Expires: Sun, 06 Nov 1994 08:49:37 GMT", "Date: Sun, 06 Nov 1994 08:40:00 GMT", "Date: nonsense",
        ]).map { $0 ?? "" }
        await propertyCheck(count: 500, input: header.array(of: 0...5), Gen.double(in: 0...1000), Gen.double(in: 0...1000)) { lines, a, b in
            let headers = lines.map { line -> CacheMetadata.Header in
                let parts = line.split(separator: ":", maxSplits: 1)
                return CacheMetadata.Header(String(parts[0]), String(parts[1].dropFirst()))
            }
            let meta = CacheMetadata(url: "http://x/", status: 200, requestTime: 784_111_000, responseTime: 784_111_001, headers: headers)
            let freshness = Freshness(defaultTTL: 300)
            let (early, late) = (784_111_001 + min(a, b), 784_111_001 + max(a, b))
            #expect(freshness.currentAge(meta, now: early) >= 0)
            #expect(freshness.currentAge(meta, now: late) >= freshness.currentAge(meta, now: early))
            if freshness.isFresh(meta, now: late) { #expect(freshness.isFresh(meta, now: early)) }
        }
    }

    // MARK: - Metadata files

    static let sampleMetadata = CacheMetadata(
        url: "https://example.com/a.png", status: 200, requestTime: 1.5, responseTime: 2.25,
        headers: [.init("ETag", "\"x\""), .init("Cache-Control", "max-age=60")], varyRequest: [.init("accept", "*/*")],
        bodyLength: 153, bodyDigest: "0123456789abcdef0123456789abcdef", bodyInode: 42, bodyMtimeNs: 7, format: "png", width: 64, height: 48)

    func decodeGuarded(_ bytes: [UInt8]) -> CacheMetadata? {
        GuardedMemory.with(bytes) { CacheMetadata.decode(UnsafeRawBufferPointer($0)) }
    }

    @Test func decodingRandomAndCorruptedMetadataNeverCrashes() async {
        await propertyCheck(count: 300, input: Gen.uint8().array(of: 0...400)) { bytes in
            #expect(decodeGuarded(bytes) == nil || bytes.starts(with: Array("asyncfetch-meta 1\n".utf8)))
        }
        let encoded = Self.sampleMetadata.encoded()
        let mutation = zip(Gen.int(in: 0...10_000), Gen<UInt8?>.element(of: [0x0A, 0x20, 0x00, 0x41, 0xFF, 0x2D, 0x39]).map { $0 ?? 0 })
        await propertyCheck(count: 1000, input: Gen.int(in: 0...encoded.count), mutation.array(of: 0...4)) { cut, flips in
            var bytes = Array(encoded.prefix(cut))
            for (offset, value) in flips where !bytes.isEmpty { bytes[offset % bytes.count] = value }
            if let decoded = decodeGuarded(bytes) { #expect(decoded.bodyLength >= 0) }
        }
    }

    @Test func lineBreaksInValuesCannotAddLines() {
        var meta = Self.sampleMetadata
        meta.headers = [.init("X-Evil", "a\r\nstatus 999\nb\rc")]
        let decoded = decodeGuarded(meta.encoded())
        #expect(decoded?.status == 200)
        #expect(decoded?.headers.first?.value == "a  status 999 b c")
    }

    @Test func metadataRoundTrips() async {
        let text = Gen.latin1.string(of: 0...30).map { String(String.UnicodeScalarView($0.unicodeScalars.filter { $0 != "\n" && $0 != "\r" })) }
        let name = Gen.letterOrNumber.string(of: 1...12)
        await propertyCheck(count: 300, input: text, zip(name, text).array(of: 0...5), Gen.int(in: 0...Int(Int32.max)),
                            Gen.double(in: 0...2e9)) { url, headers, length, time in
            var meta = Self.sampleMetadata
            meta.url = url
            meta.headers = headers.map { CacheMetadata.Header($0.0, $0.1) }
            meta.bodyLength = Int64(length)
            meta.responseTime = time
            #expect(decodeGuarded(meta.encoded()) == meta)
        }
    }
}
