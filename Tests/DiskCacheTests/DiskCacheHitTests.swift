@testable import DiskCache
import Foundation
import Testing
import TestSupport

/// The hit path compares the record's key and URL in place (no strings made
/// for them) and reads the record into a small buffer first: each shortcut
/// must give the answers the full decoding gives. A record that names
/// another key or URL, is cut short or damaged, or describes a body that is
/// no longer the one on disk, is a miss (SPEC §4).
@Suite struct DiskCacheHitTests {
    let temp: TempDirectory
    let store: DiskCacheStore

    init() throws {
        temp = try TempDirectory(prefix: "asyncfetch-hit")
        store = try DiskCacheStore(directory: temp.path + "/cache")
    }

    @discardableResult
    func put(_ url: String, _ bytes: [UInt8], headers: [CacheMetadata.Header] = [.init("ETag", "\"v1\"")]) throws -> CacheEntry {
        let key = try CacheKey(url: url)
        let writer = try store.makeWriter(for: key.hex)
        try bytes.withUnsafeBytes { try writer.append($0) }
        return try writer.commit(CacheMetadata(url: key.storedURL, status: 200, requestTime: 1, responseTime: 2, headers: headers))
    }

    /// The record on `entry`'s body with `old` replaced by `new` (same length:
    /// the record stays well-formed, only the value changes).
    func rewriteRecord(_ entry: CacheEntry, _ old: String, _ new: String) throws {
        let raw = String(decoding: try #require(getRecordBytes(entry.bodyPath)), as: UTF8.self)
        #expect(raw.contains(old) && old.utf8.count == new.utf8.count)
        #expect(setRecordBytes(entry.bodyPath, Array(raw.replacingOccurrences(of: old, with: new).utf8)))
    }

    @Test func aHitNamesExactlyItsKeyAndURL() throws {
        let url = "https://x.test/a.png"
        let entry = try put(url, Array(repeating: 1, count: 300))
        let hit = try #require(store.lookup(entry.key, url: url))
        #expect(hit.metadata == entry.metadata && hit.metadata.url == url && hit.metadata.key == entry.key)
        for other in ["https://x.test/a.pnG", "https://x.test/a.pn", "https://x.test/a.png/", "", "https://x.test/b.png"] {
            #expect(store.lookup(entry.key, url: other) == nil, "\(other) is another URL")
        }
        #expect(store.lookup(entry.key)?.metadata == entry.metadata, "without a URL to compare, the record's own")
    }

    /// An answer-only lookup (`--offline`) leaves out the digest, and nothing
    /// else (its headers, `ETag` included, are read in place and cost
    /// nothing until asked for); it checks the record and the body as every lookup does.
    @Test func anAnswerOnlyLookupLeavesOutTheDigestOnly() throws {
        let url = "https://x.test/answer.png"
        let headers: [CacheMetadata.Header] = [.init("ETag", "\"v1\""), .init("Date", "Sun, 06 Nov 1994 08:49:37 GMT"),
                                               .init("etag", "\"v2\""), .init("Cache-Control", "max-age=60"),
                                               .init("Content-Type", "image/png"), .init("Vary", "Accept")]
        let entry = try put(url, Array(repeating: 4, count: 300), headers: headers)
        let key = try CacheKey(url: url)
        let whole = try #require(store.lookup(key, accessTime: false, answerOnly: false))
        #expect(whole.metadata == entry.metadata && !whole.metadata.bodyDigest.isEmpty)
        let answer = try #require(store.lookup(key, accessTime: false, answerOnly: true))
        var expected = entry.metadata
        expected.bodyDigest = ""
        #expect(answer.metadata == expected)
        #expect(answer.metadata.header("Cache-Control") == "max-age=60" && answer.metadata.header("Vary") == "Accept")
        #expect(answer.metadata.header("etag") == "\"v1\"" && answer.metadata.headers == headers)
        #expect(answer.bodyPath == whole.bodyPath && answer.inode == whole.inode)
        // The checks stay: a body of another length, or a record for another URL, is a miss.
        try rewriteRecord(entry, "body-length 300", "body-length 301")
        #expect(store.lookup(key, accessTime: false, answerOnly: true) == nil)
        try rewriteRecord(entry, "body-length 301", "body-length 300")
        try rewriteRecord(entry, "url https://x.test/answer.png", "url https://x.test/answeR.png")
        #expect(store.lookup(key, accessTime: false, answerOnly: true) == nil)
    }

    @Test func aRecordNamingAnotherURLOrKeyIsAMiss() throws {
        let url = "https://x.test/u.png"
        let entry = try put(url, Array(repeating: 2, count: 300))
        try rewriteRecord(entry, "url https://x.test/u.png", "url https://x.test/v.png")
        #expect(store.lookup(entry.key, url: url) == nil)
        #expect(store.lookup(entry.key)?.metadata.url == "https://x.test/v.png", "the record itself still reads")
        try rewriteRecord(entry, "url https://x.test/v.png", "url https://x.test/u.png")
        #expect(store.lookup(entry.key, url: url) != nil)
        let otherKey = String(entry.key.reversed())
        try rewriteRecord(entry, "key " + entry.key, "key " + otherKey)
        #expect(store.lookup(entry.key, url: url) == nil)
        #expect(store.lookup(entry.key) == nil)
        #expect(try store.verify().removed.first?.reason.contains("another key") == true)
    }

    /// Every prefix of a record (but the one that only lacks the final
    /// newline) and damaged fields are misses, with or without a URL.
    @Test func aRecordCutShortOrDamagedIsAMiss() throws {
        let url = "https://x.test/cut.png"
        let entry = try put(url, Array(repeating: 3, count: 300))
        let whole = try #require(getRecordBytes(entry.bodyPath))
        for cut in 0..<(whole.count - 1) {
            #expect(setRecordBytes(entry.bodyPath, Array(whole.prefix(cut))))
            #expect(store.lookup(entry.key, url: url) == nil, "a record cut at \(cut) bytes")
            #expect(store.lookup(entry.key) == nil, "a record cut at \(cut) bytes")
        }
        #expect(setRecordBytes(entry.bodyPath, whole))
        #expect(store.lookup(entry.key, url: url) != nil)
        try rewriteRecord(entry, "body-length 300", "body-length 3x0")
        #expect(store.lookup(entry.key, url: url) == nil)
        try rewriteRecord(entry, "body-length 3x0", "body-length 301")
        #expect(store.lookup(entry.key, url: url) == nil, "a length the body does not have")
        try rewriteRecord(entry, "body-length 301", "body-length 300")
        try rewriteRecord(entry, "body-digest xxh3-128 ", "body-digest xxh3-129 ")
        #expect(store.lookup(entry.key, url: url) == nil, "an unknown digest algorithm")
    }

    /// The first read's buffer is the thread's own and is not cleared between
    /// reads: a record cut short, read right after the whole one (longest cut
    /// first, all on this thread), must not be completed by the bytes left
    /// from that read.
    @Test func aRecordCutShortAfterTheWholeOneIsStillAMiss() throws {
        let url = "https://x.test/again.png"
        let entry = try put(url, Array(repeating: 3, count: 300))
        let whole = try #require(getRecordBytes(entry.bodyPath))
        for cut in (0..<(whole.count - 1)).reversed() {
            #expect(setRecordBytes(entry.bodyPath, whole))
            #expect(store.lookup(entry.key, url: url) != nil)
            #expect(setRecordBytes(entry.bodyPath, Array(whole.prefix(cut))))
            #expect(store.lookup(entry.key, url: url) == nil, "a record cut at \(cut) bytes")
        }
    }

    /// The cache never serves a body that does not match its metadata: a
    /// body grown, shrunk or touched since the record was written is a miss.
    @Test func aBodyThatNoLongerMatchesItsRecordIsAMiss() throws {
        let grown = try put("https://x.test/grown.png", Array(repeating: 4, count: 300))
        let handle = try #require(FileHandle(forWritingAtPath: grown.bodyPath))
        handle.seekToEndOfFile()
        handle.write(Data([4]))
        try handle.close()
        #expect(store.lookup(grown.key, url: "https://x.test/grown.png") == nil)

        let shrunk = try put("https://x.test/shrunk.png", Array(repeating: 5, count: 300))
        #expect(truncate(shrunk.bodyPath, 299) == 0)
        #expect(store.lookup(shrunk.key, url: "https://x.test/shrunk.png") == nil)

        let touched = try put("https://x.test/touched.png", Array(repeating: 6, count: 300))
        var info = stat()
        #expect(stat(touched.bodyPath, &info) == 0)
        var later = info.st_mtim
        later.tv_nsec = (later.tv_nsec + 1) % 1_000_000_000
        #expect(utimensat(AT_FDCWD, touched.bodyPath, [info.st_atim, later], 0) == 0)
        #expect(store.lookup(touched.key, url: "https://x.test/touched.png") == nil)
    }

    /// A record larger than the first read (`attributeFirstRead`) is read
    /// whole with a second call.
    @Test func aRecordLargerThanTheFirstReadIsReadWhole() throws {
        let headers: [CacheMetadata.Header] = (0..<25).map { .init("X-Header-\($0)", String(repeating: "w", count: 100)) }
        let url = "https://x.test/long.png"
        let entry = try put(url, Array(repeating: 7, count: 300), headers: headers)
        let size = try #require(getRecordBytes(entry.bodyPath)).count
        #expect(size > DiskCacheStore.attributeFirstRead && size < CacheDefaults.maxRecordAttributeSize)
        let hit = try #require(store.lookup(entry.key, url: url))
        #expect(hit.recordOnBody && hit.metadata == entry.metadata && hit.metadata.headers.count == 25)
        #expect(store.lookup(entry.key, url: "https://x.test/long.pn") == nil)
    }

    /// URLs are compared as strings: a byte-different but equal string (the
    /// composed and decomposed forms of "é") matches, as it always did.
    @Test func theInPlaceComparisonAgreesWithStringEquality() {
        var meta = CacheMetadata(url: "https://x.test/caf\u{E9}.png", status: 200, requestTime: 1, responseTime: 2, headers: [])
        meta.key = "0123456789abcdef0123456789abcdef"
        meta.bodyLength = 1
        let bytes = meta.encoded()
        func decoded(key: String, url: String?) -> CacheMetadata.Decoded {
            bytes.withUnsafeBytes { CacheMetadata.decode($0, key: MD5.Digest(hex: key), url: url) }
        }
        let decomposed = "https://x.test/cafe\u{301}.png"
        guard case .record(let found) = decoded(key: meta.key, url: decomposed) else {
            Issue.record("the decomposed form is the same URL")
            return
        }
        #expect(found.url == meta.url)
        guard case .mismatch = decoded(key: meta.key, url: "https://x.test/cafe.png") else {
            Issue.record("another URL")
            return
        }
        guard case .mismatch = decoded(key: "0123456789abcdef0123456789abcdee", url: nil) else {
            Issue.record("another key")
            return
        }
        let cut = Array(bytes.dropLast(5))
        guard case .invalid = cut.withUnsafeBytes({ CacheMetadata.decode($0, key: MD5.Digest(hex: meta.key), url: meta.url) }) else {
            Issue.record("a cut record is invalid, whatever it names")
            return
        }
    }
}
