import DiskCache
import Support
import Testing

/// A 304's merge (`CacheMetadata.replaceHeaders`, RFC 9111 §4.3.4) made from
/// a decoded record's own header table answers, and is written back, as the
/// merge of its `[Header]` list: the picked fields replace every stored
/// header of their names (ASCII case-insensitively) and follow the kept ones.
@Suite struct HeaderMergeTests {
    /// Names of every kind in several cases, others near them, non-ASCII ones, and names a list may hold
    /// that a record line cannot (a space, a line break: the encoder writes them as one word).
    static let names = RecordHeadersTests.names + ["Pragma", "PRAGMA", "content-language", "Set-Cookie", "X Space", "X\rCR"]
    static let values = RecordHeadersTests.values + ["a\r\nforged 1", "tail\r", "\"v2\""]
    /// What the merge picks here (a 304's stored fields are `Storability.isStored`'s, in `HTTPCaching`).
    static let picked: Set<String> = ["date", "etag", "last-modified", "cache-control", "content-type", "vary", "pragma",
                                      "content-language", "x-custom", "caché-control", "x space"]

    static func isPicked(_ name: String) -> Bool { picked.contains(asciiLowercased(name)) }

    static func asciiLowercased(_ name: String) -> String {
        String(decoding: name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// The merge as `Revalidation.merged` made it before: the list filtered, the picked fields appended.
    static func listMerge(_ stored: [CacheMetadata.Header], _ fields: [(name: String, value: String)]) -> [CacheMetadata.Header]? {
        let updates = fields.filter { isPicked($0.name) }.map { CacheMetadata.Header($0.name, $0.value) }
        guard !updates.isEmpty else { return nil }
        return stored.filter { old in !updates.contains { asciiLowercased($0.name) == asciiLowercased(old.name) } } + updates
    }

    /// Merges `fields` into `meta` and checks every reading and the record written against the list's merge.
    func expectListMerge(_ meta: CacheMetadata, _ fields: [(name: String, value: String)], _ context: String) throws {
        var merged = meta
        let replaced = merged.replaceHeaders(with: fields.map { HeaderField(name: $0.name, value: $0.value) }, picking: Self.isPicked)
        let pickedFields = fields.filter { Self.isPicked($0.name) }
        #expect(replaced.count == pickedFields.count, "\(context)")
        #expect(replaced.varies == pickedFields.contains { Self.asciiLowercased($0.name) == "vary" }, "\(context)")
        var expected = meta
        if let list = Self.listMerge(meta.headers, fields) { expected.headers = list }
        #expect(merged == expected, "\(context)")
        RecordHeadersTests().expectSameAnswers(merged, expected.headers, context)
        #expect(merged.encoded() == expected.encoded(), "\(context): the record written back")
        let reread = try #require(merged.encoded().withUnsafeBytes { CacheMetadata.decode($0) })
        #expect(reread.encoded() == expected.encoded(), "\(context): read back and written again")
    }

    @Test func aMergeIntoADecodedRecordIsTheListsMerge() throws {
        var generator = SystemRandomNumberGenerator()
        func header() -> CacheMetadata.Header {
            .init(Self.names.randomElement(using: &generator)!, Self.values.randomElement(using: &generator)!)
        }
        for round in 0..<400 {
            let stored = (0..<Int.random(in: 0...12, using: &generator)).map { _ in header() }
            let fields = (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                let field = header()
                return (name: field.name, value: field.value)
            }
            let meta = CacheMetadata(url: "https://x.test/\(round)", status: 200, requestTime: 1, responseTime: 2, headers: stored,
                                     varyRequest: round % 3 == 0 ? [.init("accept", "image/webp")] : [], bodyLength: 7)
            let decoded = try #require(meta.encoded().withUnsafeBytes { CacheMetadata.decode($0) })
            try expectListMerge(decoded, fields, "round \(round), decoded")
            try expectListMerge(meta, fields, "round \(round), a list")
        }
    }

    /// A record another writer could leave (invalid UTF-8, a header without a value, other lines between the
    /// headers), merged: the kept headers read and are written back repaired, as the list's merge has them.
    @Test func oddRecordLinesAreKeptAsTheListKeepsThem() throws {
        let lines: [[UInt8]] = [
            Array("h DATE Sun, 06 Nov 1994 08:49:37 GMT".utf8), Array("future-field 1 2".utf8),
            Array("h X-Bad ".utf8) + [0xFF, 0xFE] + Array(" and a long tail to be kept".utf8),
            Array("v accept image/webp".utf8), Array("h Content-Type".utf8),
            Array("h ".utf8) + [0xC3, 0x28] + Array(" short".utf8), Array("h pragma no-cache".utf8),
            Array("h Cache-Control public".utf8), Array("h ETag \"v1\"".utf8),
        ]
        let head = "asyncfetch-meta 2\nkey 0cc175b9c0f1b6a831c399e269772661\nurl https://x.test/a\nstatus 200\n"
            + "request-time 1.0\nresponse-time 2.0\nhas-body 1\nbody-length 3\nbody-digest xxh3-128 00\nbody-mtime-ns 5\n"
        let record = Array(head.utf8) + lines.flatMap { $0 + [0x0A] } + Array("end\n".utf8)
        let decoded = try #require(record.withUnsafeBytes { CacheMetadata.decode($0) })
        try expectListMerge(decoded, [("Date", "Mon, 07 Nov 1994 08:49:37 GMT"), ("Server", "nginx"), ("etag", "\"v1\"")], "odd")
        try expectListMerge(decoded, [("PRAGMA", "x"), ("Cache-Control", "max-age=1"), ("Cache-Control", "public")], "odd, repeated")
        try expectListMerge(decoded, [("Server", "nginx")], "odd, nothing picked")
    }
}
