import DiskCache
import Foundation
import Support
import Testing
import TestSupport

@Suite struct CacheMetadataTests {
    static let sample = CacheMetadata(
        url: "https://example.com/a.png", status: 200, requestTime: 1_700_000_000.25, responseTime: 1_700_000_000.5,
        headers: [.init("ETag", "\"abc\""), .init("Cache-Control", "max-age=60, must-revalidate"),
                  .init("Content-Type", "image/png")],
        varyRequest: [.init("accept", "image/webp")], hasBody: true, bodyLength: 1234,
        bodyDigest: "0123456789abcdef0123456789abcdef", bodyInode: 42, bodyMtimeNs: 1_700_000_000_123_456_789,
        format: "png", width: 64, height: 48)

    @Test func roundTrips() {
        let bytes = Self.sample.encoded()
        let decoded = bytes.withUnsafeBytes { CacheMetadata.decode($0) }
        #expect(decoded == Self.sample)
    }

    @Test func truncatedOrForeignFilesAreRejected() {
        let bytes = Self.sample.encoded()
        for cut in [0, 1, 10, bytes.count / 2, bytes.count - 5] {
            let partial = Array(bytes.prefix(cut))
            #expect(partial.withUnsafeBytes { CacheMetadata.decode($0) } == nil, "a file cut at \(cut) bytes must not parse")
        }
        let foreign = Array("hello\nworld\nend\n".utf8)
        #expect(foreign.withUnsafeBytes { CacheMetadata.decode($0) } == nil)
    }

    @Test func newlinesInValuesCannotForgeFields() {
        var meta = Self.sample
        meta.headers.append(.init("X-Evil", "a\nbody-length 1\nend"))
        let decoded = meta.encoded().withUnsafeBytes { CacheMetadata.decode($0) }
        #expect(decoded?.bodyLength == 1234)
    }

    @Test func storedTimeRoundTripsAndDefaultsToTheResponseTime() throws {
        var meta = Self.sample
        meta.storedAt = 1_800_000_000.75
        let decoded = try #require(meta.encoded().withUnsafeBytes { CacheMetadata.decode($0) })
        #expect(decoded.storedAt == 1_800_000_000.75)
        // A file written before the field existed.
        let old = String(decoding: Self.sample.encoded(), as: UTF8.self)
            .split(separator: "\n").filter { !$0.hasPrefix("stored-time ") }.joined(separator: "\n") + "\n"
        let parsed = try #require(Array(old.utf8).withUnsafeBytes { CacheMetadata.decode($0) })
        #expect(parsed.storedAt == Self.sample.responseTime)
    }

    @Test func unknownFieldsFromANewerWriterAreSkipped() throws {
        var text = String(decoding: Self.sample.encoded(), as: UTF8.self)
        text = text.replacingOccurrences(of: "status 200\n", with: "status 200\nfuture-field something\n")
        let parsed = try #require(Array(text.utf8).withUnsafeBytes { CacheMetadata.decode($0) })
        #expect(parsed == Self.sample)
    }

    /// Times are written by `String(Double)` and read back exactly; anything
    /// but a whole number in that form rejects the file.
    @Test func timesRoundTripExactlyAndOddNumbersAreRejected() throws {
        var times = [0, 1e-05, 0.1, 1_763_779_200.123456, 1_700_000_000.000001, 123_456_789_012.5, Double.leastNonzeroMagnitude,
                     9_007_199_254_740_992, 9_007_199_254_740_994, 1e22, 0.1 + 0.2, -2.5, 1_763_779_200.1234567]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {   // times as the clock gives them: every microsecond pattern, and noise in the last bits
            times.append(Double.random(in: 1_600_000_000...1_900_000_000, using: &generator))
            times.append(Double(Int.random(in: 1_600_000_000_000_000...1_900_000_000_000_000, using: &generator)) / 1e6)
        }
        for time in times {
            var meta = Self.sample
            meta.requestTime = time
            meta.storedAt = time
            let decoded = try #require(meta.encoded().withUnsafeBytes { CacheMetadata.decode($0) })
            #expect(decoded.requestTime == time && decoded.storedAt == time, "\(time)")
        }
        let text = String(decoding: Self.sample.encoded(), as: UTF8.self)
        for bad in ["", " 1.5", "1.5 ", "1.5x", "nan", "inf", "-inf", "+1", "1e999", "\(String(repeating: "1", count: 70))"] {
            let changed = text.replacingOccurrences(of: "request-time 1700000000.25\n", with: "request-time \(bad)\n")
            #expect(changed != text)
            #expect(Array(changed.utf8).withUnsafeBytes { CacheMetadata.decode($0) } == nil, "'\(bad)'")
        }
    }

    /// Times are written without the formatting engine but in exactly the
    /// bytes `Double.description` gives (records stay what older writers
    /// wrote), for the clock's whole microseconds and for any other value.
    @Test func timesAreWrittenAsDescriptionWritesThem() throws {
        var times: [Double] = [0, 1, 1.5, -2.5, 1e-05, 0.1 + 0.2, 1_700_000_000, 1_700_000_000.25, 1_700_000_000.000001,
                               4_294_967_295.999999, 4_294_967_296.5, 9_007_199_254_740_992, 1_763_779_200.1234567]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            times.append(Double(Int.random(in: 1_000_000...4_300_000_000_000_000, using: &generator)) / 1e6)
            times.append(Double.random(in: 1...4_300_000_000, using: &generator))
        }
        for time in times {
            var meta = Self.sample
            meta.requestTime = time
            let text = String(decoding: meta.encoded(), as: UTF8.self)
            #expect(text.contains("\nrequest-time \(time.description)\n"), "\(time)")
        }
    }

    /// Numbers as `description` writes them, at every length from 1 to the
    /// 19 digits of `Int64` and the 20 of `UInt64` (the inode), both ends
    /// of each length, and read back the same.
    @Test func numbersAreWrittenAsDescriptionWritesThem() throws {
        var numbers: [Int64] = [0, Int64.max, Int64.min, -1, -9, -10]
        var power: Int64 = 1
        for _ in 1...18 {
            power *= 10
            numbers += [power - 1, power, power + 1, -power, 2 * power + 47]
        }
        for number in numbers {
            var meta = Self.sample
            meta.bodyMtimeNs = number
            meta.bodyLength = number == Int64.min ? 0 : abs(number)
            meta.bodyInode = UInt64.max - number.magnitude
            let text = String(decoding: meta.encoded(), as: UTF8.self)
            #expect(text.contains("\nbody-mtime-ns \(number)\n"), "\(number)")
            #expect(text.contains("\nbody-length \(meta.bodyLength)\n"), "\(number)")
            #expect(text.contains("\nbody-inode \(meta.bodyInode)\n"), "\(number)")
            // The decoder reads an inode up to Int64.max and a time above Int64.min (as real ones are).
            guard number != Int64.min else { continue }
            meta.bodyInode = number.magnitude / 2 + 1
            #expect(meta.encoded().withUnsafeBytes { CacheMetadata.decode($0) } == meta, "\(number)")
        }
        // An inode at both ends of every length up to 20 digits.
        var inodes: [UInt64] = [1, 9, UInt64.max]
        var inodePower: UInt64 = 1
        for _ in 1...19 {
            inodePower *= 10
            inodes += [inodePower - 1, inodePower, inodePower + 1, inodePower + 10, inodePower / 2 * 3 + 99]
        }
        for inode in inodes {
            var meta = Self.sample
            meta.bodyInode = inode
            let text = String(decoding: meta.encoded(), as: UTF8.self)
            #expect(text.contains("\nbody-inode \(inode)\n"), "\(inode)")
        }
    }

    /// The store's clock gives whole microseconds, so stored times print in
    /// at most 16 digits (the decoder's exact path, no strtod).
    @Test func storedTimesAreWholeMicroseconds() throws {
        let temp = try TempDirectory()
        let store = try DiskCacheStore(directory: temp.path + "/c")
        for n in 0..<20 {
            let writer = try store.makeWriter(for: MD5.hex("https://x.test/\(n)"))
            try [UInt8](repeating: 1, count: 10).withUnsafeBytes { try writer.append($0) }
            let entry = try writer.commit(CacheMetadata(url: "https://x.test/\(n)", status: 200, requestTime: 1, responseTime: 2, headers: []))
            let text = String(decoding: entry.metadata.encoded(), as: UTF8.self)
            let stored = try #require(text.split(separator: "\n").first(where: { $0.hasPrefix("stored-time ") }))
            #expect(stored.count - "stored-time ".count <= 17, "\(stored)")   // 16 digits and the point
            #expect((entry.metadata.storedAt * 1e6).rounded() / 1e6 == entry.metadata.storedAt)
        }
    }

    @Test func headerNamesCompareByASCIICaseOnly() {
        #expect(asciiCaseInsensitiveEqual("ETag", "etag") && asciiCaseInsensitiveEqual("", ""))
        #expect(!asciiCaseInsensitiveEqual("ETag", "ETa") && !asciiCaseInsensitiveEqual("ETag", "ETah"))
        // Bytes 0x20 apart that are not letters are different characters.
        #expect(!asciiCaseInsensitiveEqual("a[", "a{") && !asciiCaseInsensitiveEqual("x-1", "x\r1"))
        #expect(!asciiCaseInsensitiveEqual("é", "É"))
    }

    @Test func headersAreFoundCaseInsensitively() {
        #expect(Self.sample.header("etag") == "\"abc\"")
        #expect(Self.sample.header("CONTENT-TYPE") == "image/png")
        #expect(Self.sample.header("Content-Typ") == nil)
        #expect(Self.sample.header("Content-Type-") == nil)
    }

    /// Every prefix, every single-byte change and random garbage decode to a
    /// value or nil, never a crash, and never to a body length that was not written.
    @Test func damagedFilesNeverCrashTheDecoder() {
        let bytes = Self.sample.encoded()
        for cut in 0..<bytes.count {
            let partial = Array(bytes.prefix(cut))
            let decoded = partial.withUnsafeBytes { CacheMetadata.decode($0) }
            // A cut inside the trailing "end\n" can only lose the final newline.
            if let decoded { #expect(decoded == Self.sample && cut == bytes.count - 1) }
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var damaged = bytes
            let i = Int.random(in: 0..<damaged.count, using: &generator)
            damaged[i] = UInt8.random(in: 0...255, using: &generator)
            _ = damaged.withUnsafeBytes { CacheMetadata.decode($0) }
        }
        for length in [0, 1, 17, 100, 5000] {
            let garbage = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(garbage.withUnsafeBytes { CacheMetadata.decode($0) } == nil)
        }
        let overflow = "asyncfetch-meta 1\nurl x\nbody-length 99999999999999999999999\nend\n"
        #expect(Array(overflow.utf8).withUnsafeBytes { CacheMetadata.decode($0) } == nil)
        let negative = "asyncfetch-meta 1\nurl x\nbody-length -5\nend\n"
        #expect(Array(negative.utf8).withUnsafeBytes { CacheMetadata.decode($0) } == nil)
    }

    /// A record's longer ASCII header values are kept as its bytes (no string
    /// made until one is read): every value reads back as written, by
    /// `value`, `header(_:)` and `withValueBytes`; the record re-encodes to
    /// the same bytes; a value set afterwards replaces the kept one; and a
    /// non-ASCII value is a string as before (its invalid UTF-8 repaired).
    @Test func longHeaderValuesReadBackFromTheRecordBytes() throws {
        var meta = Self.sample
        meta.headers += [.init("Date", "Thu, 26 Nov 2026 21:42:49 GMT"), .init("Last-Modified", "Tue, 27 Oct 2026 21:42:45 GMT"),
                         .init("X-Long", String(repeating: "v", count: 3000)), .init("X-Short", "sixteen-bytes-16"),
                         .init("X-Empty", ""), .init("X-Text", "caf\u{E9} au lait, tr\u{E8}s chaud")]
        meta.varyRequest.append(.init("user-agent", "Mozilla/5.0 (X11; Linux x86_64) a long agent"))
        let bytes = meta.encoded()
        let decoded = try #require(bytes.withUnsafeBytes { CacheMetadata.decode($0) })
        #expect(decoded == meta)
        #expect(decoded.encoded() == bytes)
        for (read, written) in zip(decoded.headers + decoded.varyRequest, meta.headers + meta.varyRequest) {
            #expect(read.name == written.name && read.value == written.value)
            #expect(read.withValueBytes { Array($0) } == Array(written.value.utf8), "\(written.name)")
        }
        #expect(decoded.header("date") == "Thu, 26 Nov 2026 21:42:49 GMT")
        var changed = decoded
        changed.headers[changed.headers.count - 4].value = "changed"
        #expect(changed.header("X-Long") == "changed" && changed != decoded)
        #expect(changed.headers[changed.headers.count - 4].withValueBytes { Array($0) } == Array("changed".utf8))
        // Invalid UTF-8 in a stored value reads as the repaired string, as ever.
        var raw = Array("asyncfetch-meta 2\nurl x\nbody-length 1\nh X-Bad ".utf8) + [0xFF] + Array(String(repeating: "b", count: 20).utf8)
        raw += Array("\nend\n".utf8)
        let bad = try #require(raw.withUnsafeBytes { CacheMetadata.decode($0) })
        #expect(bad.header("X-Bad") == "\u{FFFD}" + String(repeating: "b", count: 20))
        #expect(bad.headers[0].withValueBytes { Array($0) } == Array(("\u{FFFD}" + String(repeating: "b", count: 20)).utf8))
    }

    /// The record with values kept as its bytes is refused as whole as any:
    /// every prefix short of the final newline decodes to nil, and a changed
    /// byte inside a kept value reads back changed (from this record's bytes).
    @Test func recordsWithKeptValuesAreRefusedWhenCut() throws {
        var meta = Self.sample
        meta.headers += [.init("Date", "Thu, 26 Nov 2026 21:42:49 GMT"), .init("Last-Modified", "Tue, 27 Oct 2026 21:42:45 GMT")]
        let bytes = meta.encoded()
        for cut in 0..<(bytes.count - 1) {
            #expect(Array(bytes.prefix(cut)).withUnsafeBytes { CacheMetadata.decode($0) } == nil, "cut at \(cut)")
        }
        var changed = bytes
        let month = Array("Oct 2026".utf8)
        let index = try #require((0...(bytes.count - month.count)).first { Array(bytes[$0..<($0 + month.count)]) == month })
        changed.replaceSubrange(index..<(index + 3), with: Array("Sep".utf8))
        let decoded = try #require(changed.withUnsafeBytes { CacheMetadata.decode($0) })
        #expect(decoded.header("Last-Modified") == "Tue, 27 Sep 2026 21:42:45 GMT")
        #expect(decoded.header("Date") == "Thu, 26 Nov 2026 21:42:49 GMT")
    }

    /// The sample's record with the line starting `field ` given `value`.
    private static func record(_ field: String, _ value: [UInt8]) -> [UInt8] {
        let lines = String(decoding: sample.encoded(), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        var out: [UInt8] = []
        for (n, line) in lines.enumerated() {
            out += line.hasPrefix(field + " ") ? Array((field + " ").utf8) + value : Array(line.utf8)
            if n < lines.count - 1 { out.append(0x0A) }
        }
        return out
    }

    /// Numbers are read eight digits at a time: every length from 1 to 19
    /// digits (and longer runs of leading zeros), both signs, reads the
    /// value the text spells, and a byte that is not a digit at any place
    /// (beside a digit's range, a high byte, a space) refuses the record,
    /// as does a value past `Int64`.
    @Test func integersOfEveryLengthAndEveryBadByteDecodeAsTheirText() throws {
        var generator = SystemRandomNumberGenerator()
        var texts = ["0", "-0", "9223372036854775807", "-9223372036854775807", "0000000000000000000000042", "-00000000000000000000001"]
        for length in 1...19 {
            for _ in 0..<10 {
                // Below Int64.max at 19 digits (a first digit up to 8).
                let digits = String((0..<length).map { place in
                    Character(String(Int.random(in: 0...(place == 0 && length == 19 ? 8 : 9), using: &generator)))
                })
                texts += [digits, "-" + digits]
            }
        }
        for text in texts {
            let decoded = try #require(Self.record("body-mtime-ns", Array(text.utf8)).withUnsafeBytes { CacheMetadata.decode($0) }, "\(text)")
            #expect(decoded.bodyMtimeNs == Int64(text), "\(text)")
            let bytes = Array(text.utf8)
            for place in bytes.indices where bytes[place] != 0x2D {
                for bad: UInt8 in [0x2F, 0x3A, 0x20, 0xB5, 0x61, 0x2E] {
                    var changed = bytes
                    changed[place] = bad
                    #expect(Self.record("body-mtime-ns", changed).withUnsafeBytes { CacheMetadata.decode($0) } == nil,
                            "\(String(decoding: changed, as: UTF8.self))")
                }
            }
        }
        for tooLarge in ["9223372036854775808", "-9223372036854775808", "18446744073709551615", "99999999999999999999", "-", ""] {
            #expect(Self.record("body-mtime-ns", Array(tooLarge.utf8)).withUnsafeBytes { CacheMetadata.decode($0) } == nil, "\(tooLarge)")
        }
    }

    /// Times in the clock's form (ten digits, a point, one to six decimals)
    /// are read as words: each decodes to the very `Double` its text spells
    /// (`Double(String)`, correctly rounded as `strtod`), and a byte that is
    /// not a digit at any place of it refuses the record.
    @Test func clockTimesDecodeToTheDoubleTheirTextSpells() throws {
        var generator = SystemRandomNumberGenerator()
        var texts = ["1000000000.0", "9999999999.999999", "9007199254.740992", "9007199254.740993", "1795779113.687682", "0000000001.5"]
        for decimals in 1...6 {
            for _ in 0..<60 {
                let whole = Int.random(in: 1_000_000_000...9_999_999_999, using: &generator)
                let fraction = String((0..<decimals).map { _ in Character(String(Int.random(in: 0...9, using: &generator))) })
                texts.append("\(whole).\(fraction)")
            }
        }
        for text in texts {
            let decoded = try #require(Self.record("request-time", Array(text.utf8)).withUnsafeBytes { CacheMetadata.decode($0) }, "\(text)")
            #expect(decoded.requestTime == Double(text)!, "\(text)")
            let bytes = Array(text.utf8)
            for place in bytes.indices {
                for bad: UInt8 in [0x2F, 0x3A, 0x20, 0xB5, 0x61] {
                    var changed = bytes
                    changed[place] = bad
                    #expect(Self.record("request-time", changed).withUnsafeBytes { CacheMetadata.decode($0) } == nil,
                            "\(String(decoding: changed, as: UTF8.self))")
                }
            }
        }
    }

    /// The space after a field's or a header's name is found at any place
    /// (the first 16 bytes are scanned as words, the rest by `memchr`):
    /// header names and values of every length from 1 to 40 read back as
    /// written, a value's own spaces stay in it, and unknown fields with
    /// names of every length are skipped.
    @Test func namesOfEveryLengthAreSplitAtTheirFirstSpace() throws {
        for length in 1...40 {
            let name = String((0..<length).map { Character(UnicodeScalar(UInt8(0x41 + $0 % 26))) })
            var meta = Self.sample
            meta.headers = [.init(name, "v \(length) x"), .init("X", name), .init(name, "")]
            meta.varyRequest = [.init(name.lowercased(), String(repeating: "w ", count: length))]
            let bytes = meta.encoded()
            let decoded = try #require(bytes.withUnsafeBytes { CacheMetadata.decode($0) }, "\(length)")
            #expect(decoded == meta, "\(length)")
            #expect(decoded.headers.map(\.name) == [name, "X", name] && decoded.header(name) == "v \(length) x", "\(length)")
            let text = String(decoding: bytes, as: UTF8.self)
            let unknown = text.replacingOccurrences(of: "\nend\n", with: "\nx-\(name) \(name) 1\nend\n")
            #expect(Array(unknown.utf8).withUnsafeBytes { CacheMetadata.decode($0) } == meta, "\(length)")
            let noSpace = text.replacingOccurrences(of: "\nend\n", with: "\nx-\(name)\nend\n")
            #expect(Array(noSpace.utf8).withUnsafeBytes { CacheMetadata.decode($0) } == nil, "\(length)")
        }
    }

    /// Field names are compared as words read from their literals (`ByteRun.equals`): a name with
    /// any one byte changed (the low bit, the ASCII case bit, the high bit), at any place, is not
    /// that field's; the record then lacks the field (an unknown name is skipped) or is refused,
    /// and never reads back as the sample. The same for the magic line, `end` and the digest's
    /// algorithm name.
    @Test func aNameWithAnyByteChangedIsNotThatField() throws {
        // Every field away from what a record without it reads as (no key, a body, stored at the response).
        var meta = Self.sample
        meta.key = "0123456789abcdef0123456789abcdef"
        meta.hasBody = false
        meta.storedAt = 1_700_000_001.75
        let bytes = meta.encoded()
        #expect(bytes.withUnsafeBytes { CacheMetadata.decode($0) } == meta)
        var lineStart = 0
        var changedNames = 0
        while lineStart < bytes.count {
            let lineEnd = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.count
            let line = bytes[lineStart..<lineEnd]
            // The name (the magic line: all of it), and for `body-digest` also its algorithm's.
            var spans = [lineStart..<(line.firstIndex(of: 0x20) ?? lineEnd)]
            if lineStart == 0 { spans = [lineStart..<lineEnd] }
            if Array(line).starts(with: Array("body-digest ".utf8)) {
                let algorithm = lineStart + 12
                spans.append(algorithm..<(bytes[algorithm..<lineEnd].firstIndex(of: 0x20) ?? lineEnd))
            }
            for span in spans {
                for place in span {
                    for flip: UInt8 in [0x01, 0x20, 0x80] {
                        var changed = bytes
                        changed[place] ^= flip
                        let decoded = changed.withUnsafeBytes { CacheMetadata.decode($0) }
                        #expect(decoded != meta, "byte \(place - span.lowerBound) of '\(String(decoding: bytes[span], as: UTF8.self))' ^ \(flip)")
                        changedNames += 1
                    }
                }
            }
            lineStart = lineEnd + 1
        }
        #expect(changedNames > 400)
    }
}
