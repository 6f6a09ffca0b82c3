import DiskCache
import Foundation
@testable import RemoteCache
import Testing
import TestSupport

/// The remote object's format (`RemoteObject`) and its reader
/// (`RemoteObjectSink`): known vectors, every way an object can be split
/// into pieces, and every way one can be wrong. No server: the sink
/// writes into a cache in a temporary directory.
@Suite struct RemoteObjectTests {
    static func length(_ line: String) -> Int? {
        Array(line.utf8).withUnsafeBytes { RemoteObject.recordLength($0) }
    }

    @Test func theHeaderLineNamesARecordLength() {
        #expect(Self.length("asyncfetch-object 1 3") == 3)
        #expect(Self.length("asyncfetch-object 1 0042") == 42)
        #expect(Self.length("asyncfetch-object 1 \(RemoteDefaults.recordLimit)") == RemoteDefaults.recordLimit)
        // Every header `header(record:)` writes reads back as its record's length.
        for count in [1, 9, 10, 999, 65_536] {
            let header = RemoteObject.header(record: [UInt8](repeating: 0x61, count: count))
            let newline = header.firstIndex(of: 0x0A)!
            #expect(header[..<newline].withUnsafeBytes { RemoteObject.recordLength($0) } == count)
        }
    }

    @Test func anyOtherLineNamesNone() {
        for line in ["", "asyncfetch-object 1", "asyncfetch-object 1 ", "asyncfetch-object 1 0", "asyncfetch-object 1 -3",
                     "asyncfetch-object 1 +3", "asyncfetch-object 1  3", "asyncfetch-object 1 3 ", "asyncfetch-object 1 3\r",
                     "asyncfetch-object 1 3a", "asyncfetch-object 1 0x10", "asyncfetch-object 2 3", "Asyncfetch-object 1 3",
                     "asyncfetch-object 1 \(RemoteDefaults.recordLimit + 1)",
                     "asyncfetch-object 1 " + String(repeating: "9", count: 40),   // no overflow on the way
                     "asyncfetch-object 1 " + String(repeating: "0", count: 44) + "1",   // longer than a header line
                     "<html><body>Not Found</body></html>", "HTTP/1.1 200 OK"] {
            #expect(Self.length(line) == nil, "\(line)")
        }
    }

    /// A stored entry and its object, as a host that uploads it makes them.
    struct Entry {
        let temp: TempDirectory
        let url = "http://origin.test/img/a.png"
        let key: CacheKey
        let body: [UInt8]
        let record: [UInt8]
        var object: [UInt8] { RemoteObject.encode(record: record, body: body) }

        init(bodyLength: Int = 5000) throws {
            temp = try TempDirectory(prefix: "asyncfetch-object")
            let store = try DiskCacheStore(directory: temp.path + "/a")
            key = try CacheKey(url: url)
            body = (0..<bodyLength).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let writer = try store.makeWriter(for: key.hex)
            try body.withUnsafeBytes { try writer.append($0) }
            let entry = try writer.commit(CacheMetadata(url: key.storedURL, status: 200, requestTime: 1, responseTime: 2,
                                                        headers: [CacheMetadata.Header("Content-Type", "image/png")]))
            record = entry.metadata.encoded()
        }

        /// A reader's cache (empty at first).
        func reader() throws -> DiskCacheStore { try DiskCacheStore(directory: temp.path + "/b") }

        /// `object` through a sink in pieces of `piece` bytes, then checked: the entry, or why not.
        func read(_ object: [UInt8], piece: Int, into store: DiskCacheStore, url: String? = nil) throws -> CacheEntry {
            let sink = RemoteObjectSink(store: store, key: key, hex: key.hex)
            do {
                var start = 0
                while start < object.count {
                    let end = min(object.count, start + piece)
                    try object[start..<end].withUnsafeBytes { try sink.write($0) }
                    start = end
                }
                return try sink.finish(url: url ?? key.storedURL)
            } catch {
                sink.abandon()
                throw error
            }
        }

        /// The body the reader's cache holds for the key, or nil.
        func stored(in store: DiskCacheStore) throws -> [UInt8]? {
            guard let entry = store.lookup(key.hex, url: key.storedURL, accessTime: false) else { return nil }
            return Array(try Data(contentsOf: URL(fileURLWithPath: entry.bodyPath)))
        }
    }

    @Test func anObjectReadsBackWhateverItsPieces() throws {
        let entry = try Entry()
        let headerEnd = entry.object.firstIndex(of: 0x0A)!
        for piece in [1, 2, 7, headerEnd, headerEnd + 1, headerEnd + 2, entry.record.count, 4096, entry.object.count] {
            let store = try entry.reader()
            let read = try entry.read(entry.object, piece: piece, into: store)
            #expect(read.metadata.bodyLength == Int64(entry.body.count), "pieces of \(piece)")
            #expect(read.metadata.url == entry.key.storedURL)
            #expect(try entry.stored(in: store) == entry.body, "pieces of \(piece)")
            try store.remove(entry.key.hex)
        }
        // A body of no bytes is an object too.
        let empty = try Entry(bodyLength: 0)
        let store = try empty.reader()
        #expect(try empty.read(empty.object, piece: 3, into: store).metadata.bodyLength == 0)
    }

    /// Each object that is not this entry's, whole and intact, is refused with a reason, and the
    /// reader's cache holds nothing for the key afterwards.
    @Test func anythingElseIsRefusedAndNothingIsStored() throws {
        let entry = try Entry()
        let object = entry.object
        let headerLength = object.firstIndex(of: 0x0A)! + 1
        var flipped = object
        flipped[object.count - 100] ^= 0x01
        var recordFlipped = object   // "body-length" becomes "Body-length": a field no record may lack
        let field = Array("\nbody-length ".utf8)
        let at = try #require(entry.record.indices.first { entry.record[$0...].starts(with: field) })
        recordFlipped[headerLength + at + 1] ^= 0x20
        let cases: [(String, [UInt8], String)] = [
            ("one body byte changed", flipped, "digest"),
            ("cut short in its body", Array(object.dropLast(10)), "the record says"),
            ("a byte too many", object + [0], "the record says"),
            ("cut short in its record", Array(object.prefix(headerLength + 10)), "cut short"),
            ("cut short in its header line", Array(object.prefix(5)), "cut short"),
            ("nothing at all", [], "cut short"),
            ("its record damaged", recordFlipped, "unreadable"),
            ("an HTML page", Array("<html><body>Not Found</body></html>\n".utf8), "not an asyncfetch object"),
            ("a line too long to be a header", [UInt8](repeating: 0x41, count: 200), "no object header line"),
        ]
        for (what, bytes, reason) in cases {
            for piece in [1, 13, 65_536] {
                let store = try entry.reader()
                let refusal = try #require(throws: (any Error).self, "\(what)") {
                    try entry.read(bytes, piece: piece, into: store)
                }
                #expect("\(refusal)".contains(reason), "\(what), pieces of \(piece): \(refusal)")
                #expect(try entry.stored(in: store) == nil, "\(what)")
            }
        }
        // Another URL's object under this key's name.
        let store = try entry.reader()
        let foreign = try #require(throws: (any Error).self) {
            try entry.read(object, piece: 4096, into: store, url: "http://origin.test/img/b.png")
        }
        #expect("\(foreign)".contains("names another URL"), "\(foreign)")
        #expect(try entry.stored(in: store) == nil)
    }

    /// A sink started over (a retried attempt) reads the whole object again from its first byte.
    @Test func aResetStartsTheObjectOver() throws {
        let entry = try Entry()
        let store = try entry.reader()
        let sink = RemoteObjectSink(store: store, key: entry.key, hex: entry.key.hex)
        try entry.object.prefix(3000).withUnsafeBytes { try sink.write($0) }
        try sink.reset()
        try entry.object.withUnsafeBytes { try sink.write($0) }
        #expect(try sink.finish(url: entry.key.storedURL).metadata.bodyLength == Int64(entry.body.count))
        #expect(try entry.stored(in: store) == entry.body)
    }
}
