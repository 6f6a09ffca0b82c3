import DiskCache
import Testing

/// A decoded record's headers are read in place (`RecordHeaders`): every way
/// of reading them answers as the `[Header]` they were written from.
@Suite struct RecordHeadersTests {
    /// Names a hit, freshness or revalidation asks for, in several cases, and others near them.
    static let names = ["Date", "date", "DATE", "Expires", "Last-Modified", "last-modified", "Age", "AGE", "Cache-Control",
                        "cache-control", "Content-Type", "content-TYPE", "Vary", "vary", "ETag", "etag", "X-Date", "Dates",
                        "Ag", "Content-Typ", "X-Custom", "x-custom", "Content-Language", "Caché-Control", "Ä", "Dāte"]
    static let values = ["", "0", "image/png", "image/webp", "max-age=60", "max-age=60, must-revalidate",
                         "Sun, 06 Nov 1994 08:49:37 GMT", "\"a long entity tag value\"", "a b  c", " leading", "café au lait",
                         "ünïcödé long enough to be kept", String(repeating: "v", count: 300), "100, 5"]

    /// Every reading of `decoded` against the list `expected` (what was written).
    func expectSameAnswers(_ decoded: CacheMetadata, _ expected: [CacheMetadata.Header], _ context: String) {
        #expect(decoded.headers == expected, "\(context)")
        #expect(decoded.headerCount == expected.count, "\(context)")
        for (i, header) in expected.enumerated() {
            #expect(decoded.headerKind(at: i) == CacheMetadata.HeaderKind(header.name), "\(context): kind of \(header.name)")
            #expect(decoded.headerValue(at: i) == header.value, "\(context): value \(i)")
            #expect(decoded.withHeaderValue(at: i) { Array($0) } == Array(header.value.utf8), "\(context): bytes \(i)")
        }
        let listed = CacheMetadata(url: "u", status: 200, requestTime: 0, responseTime: 0, headers: expected)
        for name in Self.names + expected.map(\.name) {
            #expect(decoded.header(name) == listed.header(name), "\(context): header(\(name))")
            #expect(decoded.field(name) == listed.field(name), "\(context): field(\(name))")
            let kind = CacheMetadata.HeaderKind(name)
            if kind != .other {
                #expect(decoded.header(kind) == listed.header(name), "\(context): header(kind of \(name))")
                #expect(decoded.hasHeader(kind) == (listed.header(name) != nil), "\(context): hasHeader(\(name))")
            }
        }
    }

    @Test func decodedHeadersAnswerAsTheListTheyWereWrittenFrom() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<400 {
            let count = round < 10 ? round : Int.random(in: 0...30, using: &generator)
            let headers = (0..<count).map { _ in
                CacheMetadata.Header(Self.names.randomElement(using: &generator)!, Self.values.randomElement(using: &generator)!)
            }
            let meta = CacheMetadata(url: "https://x.test/\(round)", status: 200, requestTime: 1, responseTime: 2, headers: headers,
                                     varyRequest: round % 3 == 0 ? [.init("accept", "image/webp")] : [])
            let decoded = try #require(meta.encoded().withUnsafeBytes { CacheMetadata.decode($0) })
            #expect(decoded == meta)
            expectSameAnswers(decoded, headers, "round \(round)")
            // Encoded again from the bytes it keeps: the same record.
            #expect(decoded.encoded() == meta.encoded())
        }
    }

    /// The decoder notes up to 12 headers as it reads them and makes the
    /// table of a longer list in a second pass: both sides of that edge,
    /// with `v` lines and an unknown field among the headers.
    @Test func recordsAroundTheDecodersTableSizeReadTheSame() throws {
        for count in [1, 11, 12, 13, 24] {
            let headers = (0..<count).map { i in
                CacheMetadata.Header(Self.names[(i * 7) % Self.names.count], Self.values[(i * 5) % Self.values.count])
            }
            let meta = CacheMetadata(url: "https://x.test/\(count)", status: 200, requestTime: 1, responseTime: 2, headers: headers)
            var lines = meta.encoded().split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
            if let middle = lines.firstIndex(where: { $0.starts(with: Array("h ".utf8)) }).map({ $0 + count / 2 }) {
                lines.insert(Array("v accept image/webp".utf8), at: middle)
                lines.insert(Array("future-field 1".utf8), at: middle)
            }
            let record = Array(lines.joined(separator: [0x0A]))
            let decoded = try #require(record.withUnsafeBytes { CacheMetadata.decode($0) })
            expectSameAnswers(decoded, headers, "\(count) headers")
            #expect(decoded.varyRequest == [.init("accept", "image/webp")])
        }
    }

    /// Records another writer could leave: names in odd cases, invalid UTF-8
    /// in names and values (read back repaired, as before), a header with no
    /// value, unknown fields and `v` lines between the header lines.
    @Test func oddHeaderLinesReadAsTheirStrings() throws {
        let lines: [[UInt8]] = [
            Array("h DATE Sun, 06 Nov 1994 08:49:37 GMT".utf8), Array("future-field 1 2".utf8),
            Array("h X-Bad ".utf8) + [0xFF, 0xFE] + Array(" and a long tail to be kept".utf8),
            Array("v accept image/webp".utf8), Array("h Content-Type".utf8),
            Array("h ".utf8) + [0xC3, 0x28] + Array(" short".utf8),
            Array("h cache-control max-age=5, x=".utf8) + [0xFF],
            Array("h Cache-Control public".utf8), Array("h Vary Accept".utf8),
        ]
        let head = "asyncfetch-meta 2\nkey 0cc175b9c0f1b6a831c399e269772661\nurl https://x.test/a\nstatus 200\n"
            + "request-time 1.0\nresponse-time 2.0\nhas-body 1\nbody-length 3\nbody-digest xxh3-128 00\nbody-mtime-ns 5\n"
        let record = Array(head.utf8) + lines.flatMap { $0 + [0x0A] } + Array("end\n".utf8)
        let decoded = try #require(record.withUnsafeBytes { CacheMetadata.decode($0) })
        let expected: [CacheMetadata.Header] = [
            .init("DATE", "Sun, 06 Nov 1994 08:49:37 GMT"),
            .init("X-Bad", String(decoding: [0xFF, 0xFE] + Array(" and a long tail to be kept".utf8), as: UTF8.self)),
            .init("Content-Type", ""),
            .init(String(decoding: [0xC3, 0x28], as: UTF8.self), "short"),
            .init("cache-control", String(decoding: Array("max-age=5, x=".utf8) + [0xFF], as: UTF8.self)),
            .init("Cache-Control", "public"), .init("Vary", "Accept"),
        ]
        expectSameAnswers(decoded, expected, "odd record")
        #expect(decoded.varyRequest == [.init("accept", "image/webp")])
        #expect(decoded.headerKind(at: 0) == .date && decoded.headerKind(at: 4) == .cacheControl && decoded.headerKind(at: 6) == .vary)
    }

    /// A body digest reads back as it was written, whether it is kept as the
    /// 16 bytes its digits spell (32 lowercase hex digits) or as text.
    @Test func bodyDigestsReadBackAsWritten() throws {
        let digests = [MD5.hex("a"), MD5.hex("a").uppercased(), "", "abc", MD5.hex("a") + "0", String(MD5.hex("a").dropLast()) + "g",
                       "0123456789abcdef0123456789abcdef", "ffffffffffffffffffffffffffffffff", "00000000000000000000000000000000"]
        for digest in digests {
            let meta = CacheMetadata(url: "https://x.test/a", status: 200, requestTime: 1, responseTime: 2, headers: [],
                                     bodyDigest: digest)
            let decoded = try #require(meta.encoded().withUnsafeBytes { CacheMetadata.decode($0) })
            #expect(decoded.bodyDigest == digest && decoded == meta && decoded.encoded() == meta.encoded(), "\(digest)")
        }
    }

    /// Setting `headers` replaces the record's own; reading them leaves them as they were.
    @Test func settingHeadersReplacesTheDecodedOnes() throws {
        let meta = CacheMetadata(url: "https://x.test/a", status: 200, requestTime: 1, responseTime: 2,
                                 headers: [.init("ETag", "\"1\""), .init("Date", "Sun, 06 Nov 1994 08:49:37 GMT")])
        var decoded = try #require(meta.encoded().withUnsafeBytes { CacheMetadata.decode($0) })
        decoded.headers.append(.init("Cache-Control", "max-age=60"))
        #expect(decoded.header("cache-control") == "max-age=60" && decoded.header(.etag) == "\"1\"" && decoded.headerCount == 3)
        decoded.headers = []
        #expect(decoded.header("ETag") == nil && decoded.headerCount == 0 && !decoded.hasHeader(.date))
    }
}
