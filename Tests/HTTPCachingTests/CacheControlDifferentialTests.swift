import DiskCache
import Fetch
@testable import HTTPCaching
import Support
import Testing

/// `CacheControl` reads its directives in one pass over the bytes; before,
/// it built them with `directives(in:)` (a `String` per name and argument),
/// and so did `TierSharing` for `private` and `no-store`.
/// The old reading is kept here as the oracle, and the two must agree on
/// every value: quoting, escapes, commas in quotes, whitespace, case,
/// duplicates, invalid and huge numbers, non-ASCII and invalid UTF-8.
@Suite struct CacheControlDifferentialTests {
    /// The parser as it was (session 14), field for field.
    static func oracle(_ values: [String]) -> CacheControl {
        var cc = CacheControl()
        for value in values {
            for directive in oracleDirectives(in: value) {
                switch directive.name {
                case "max-age":
                    guard cc.maxAge == nil && !cc.maxAgeInvalid else { continue }
                    if let seconds = directive.argument.flatMap(oracleDeltaSeconds) {
                        cc.maxAge = seconds
                    } else {
                        cc.maxAgeInvalid = true
                    }
                case "no-store": cc.noStore = true
                case "no-cache": cc.noCache = true
                case "must-revalidate": cc.mustRevalidate = true
                case "must-understand": cc.mustUnderstand = true
                case "public": cc.isPublic = true
                case "private": cc.isPrivate = true
                case "stale-while-revalidate":
                    if cc.staleWhileRevalidate == nil { cc.staleWhileRevalidate = directive.argument.flatMap(oracleDeltaSeconds) }
                case "stale-if-error":
                    if cc.staleIfError == nil { cc.staleIfError = directive.argument.flatMap(oracleDeltaSeconds) }
                default: continue
                }
            }
        }
        return cc
    }

    static func oracleDirectives(in value: String) -> [(name: String, argument: String?)] {
        var out: [(name: String, argument: String?)] = []
        var name: [UInt8] = [], argument: [UInt8] = []
        var inArgument = false, quoted = false, escaped = false, hadArgument = false
        func flush() {
            let trimmedName = trimWhitespaceLower(String(decoding: name, as: UTF8.self))
            if !trimmedName.isEmpty {
                let arg = hadArgument ? trimWhitespace(String(decoding: argument, as: UTF8.self)) : nil
                out.append((trimmedName, arg))
            }
            name.removeAll(keepingCapacity: true)
            argument.removeAll(keepingCapacity: true)
            inArgument = false
            hadArgument = false
        }
        for byte in value.utf8 {
            if quoted {
                if escaped { argument.append(byte); escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { quoted = false } else { argument.append(byte) }
                continue
            }
            switch byte {
            case 0x2C: flush()
            case 0x3D where !inArgument: inArgument = true; hadArgument = true
            case 0x22 where inArgument: quoted = true
            default: if inArgument { argument.append(byte) } else { name.append(byte) }
            }
        }
        flush()
        return out
    }

    static func oracleDeltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text) ?? Int.max
    }

    /// Pieces the generated values are made of: every directive this cache
    /// reads in several cases, the syntax, numbers at and past `Int.max`,
    /// and characters that are not ASCII (one, the Kelvin sign, lowercases to `k`).
    static let pieces: [[UInt8]] = ([
        "max-age", "MAX-AGE", "Max-Age", "max_age", "max-agE", "no-store", "No-Store", "no-cache", "NO-CACHE",
        "must-revalidate", "Must-Revalidate", "PRIVATE", "Private", "must-understand", "MUST-UNDERSTAND", "public", "PUBLIC", "Public",
        "stale-while-revalidate", "Stale-While-Revalidate", "stale-if-error", "STALE-IF-ERROR", "private", "s-maxage",
        "immutable", "community", "max-ag", "max-agee", "publi", "no-storex", "max", "age", "no", "store", "must", "stale", "-",
        "=", "=", "=", "\"", "\"", "\\", ",", ",", ", ", " ", " ", "\t", "\r", "\n", "\u{0}", ";", "-", "+",
        "0", "00", "5", "60", "007", "31536000", "-1", "1e3", "1.5", "9223372036854775807", "9223372036854775808",
        "99999999999999999999999999", "18446744073709551616", "abc", "x",
        "é", "🙂", "\u{212A}", "İ", "\u{301}", "\u{FF10}", "٣",
    ] as [String]).map { Array($0.utf8) } + [[0xFF], [0xC3], [0x80], [0x0D], [0x8D], [0xAD]]

    /// A deterministic generator (xorshift64*): the same values on every run.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    }

    static func value(_ random: inout Random) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<random.below(16) {
            if random.below(8) == 0 {
                bytes.append(UInt8(truncatingIfNeeded: random.next()))
            } else {
                bytes += pieces[random.below(pieces.count)]
            }
        }
        return bytes
    }

    static func parsed(_ values: [[UInt8]]) -> CacheControl {
        var cc = CacheControl()
        for value in values { value.withUnsafeBufferPointer { cc.add(utf8: $0) } }
        return cc
    }

    @Test func agreesWithTheOldParserOnGeneratedValues() {
        var random = Random(state: 22)
        var differences: [String] = []
        for _ in 0..<40_000 {
            let values = (0..<(1 + random.below(3))).map { _ in Self.value(&random) }
            // The bytes as they come from a record, and as `String`s (invalid UTF-8 replaced, as before).
            let strings = values.map { String(decoding: $0, as: UTF8.self) }
            let expected = Self.oracle(strings)
            if Self.parsed(values) != expected || CacheControl(strings) != expected {
                differences.append(strings.debugDescription)
            }
        }
        #expect(differences.isEmpty, "\(differences.count) differ, e.g. \(differences.prefix(5))")
    }

    @Test func agreesOnEveryShortValueOfSyntax() {
        // Every value of up to 5 of these bytes: all interleavings of quotes, escapes, commas and digits.
        let alphabet = Array("m=\"\\, 9aA".utf8)
        var value: [UInt8] = []
        var count = 0
        func visit(_ depth: Int) {
            let text = String(decoding: [UInt8]("max-age".utf8) + value, as: UTF8.self)
            let prefixed = [UInt8]("max-age".utf8) + value
            #expect(Self.parsed([prefixed]) == Self.oracle([text]), "\(text.debugDescription)")
            #expect(Self.parsed([value]) == Self.oracle([String(decoding: value, as: UTF8.self)]))
            count += 1
            guard depth < 5 else { return }
            for byte in alphabet {
                value.append(byte)
                visit(depth + 1)
                value.removeLast()
            }
        }
        visit(0)
        #expect(count > 50_000)
    }

    @Test func examplesStillReadTheSame() {
        let examples = [
            "public, max-age=31536000, immutable", "max-age=0, must-revalidate", "no-cache=\"Set-Cookie, Set-Cookie2\"",
            "max-age=\"30\"", "MAX-AGE = 60 ", "max-age=\"5\"junk", "community=\"a, max-age=1, \\\" no-store\", max-age=30",
            "stale-while-revalidate=x, stale-while-revalidate=30, stale-if-error=86400", "max-age=\"1\\", "max-age=\"\\1\"",
            "max-age=99999999999999999999999", "max-age=\u{FF11}", "\u{212A}, max-age=1", "max-age\u{301}=1", "max-age=1\u{301}",
            "", ",,, ,", "=5, max-age", "\"max-age\"=1", "max-age==1", "max-age=1=2", "max-age=1 2", "max-age= \t 7 \t",
            "max\rage=5", "no\rstore", "MAX\u{0D}AGE=1", "max\u{8D}age=1", "no-cache\u{0}", "\u{0}public",
        ]
        for example in examples {
            #expect(CacheControl([example]) == Self.oracle([example]), "\(example.debugDescription)")
        }
    }

    @Test func freshnessReadsStoredValuesLikeStrings() {
        // Freshness parses a stored record's values in place; several fields are one list.
        var random = Random(state: 1994)
        for _ in 0..<3_000 {
            let values = (0..<(1 + random.below(3))).map { _ in String(decoding: Self.value(&random), as: UTF8.self) }
            let headers = values.flatMap { [CacheMetadata.Header("cache-control", $0), CacheMetadata.Header("ETag", "\"x\"")] }
            let meta = CacheMetadata(url: "https://x.test/", status: 200, requestTime: 0, responseTime: 0, headers: headers)
            #expect(Freshness.cacheControl(meta) == Self.oracle(values), "\(values.debugDescription)")
        }
    }

    @Test func aResponsesFieldsReadInPlaceLikeTheirValues() {
        // A download's storability reads the response's fields in place (`CacheControl(headers)`):
        // every `Cache-Control` field in any case, in order, others skipped.
        var random = Random(state: 2026)
        let names = ["Cache-Control", "cache-control", "CACHE-CONTROL", "Cache-Controls", "Cache-Contro", "ETag", "Pragma"]
        for _ in 0..<3_000 {
            let fields = (0..<random.below(5)).map { _ in
                HTTPHeaders.Field(name: names[random.below(names.count)], value: String(decoding: Self.value(&random), as: UTF8.self))
            }
            let headers = HTTPHeaders(fields)
            let values = fields.filter { $0.name.count == 13 && $0.name.lowercased() == "cache-control" }.map(\.value)
            #expect(CacheControl(headers) == Self.oracle(values), "\(fields)")
        }
    }
}
