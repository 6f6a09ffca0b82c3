@testable import DiskCache
import Foundation
import Testing
import TestSupport

/// The copy of an entry's metadata on its body (an extended attribute): a
/// hit reads it in one call; the metadata file stays the record and the
/// fallback; neither ever makes a body that does not match a hit.
@Suite struct DiskCacheAttributeTests {
    let temp: TempDirectory
    let store: DiskCacheStore
    var directory: String { store.directory }

    init() throws {
        temp = try TempDirectory(prefix: "asyncfetch-attr")
        store = try DiskCacheStore(directory: temp.path + "/cache")
    }

    @discardableResult
    func put(_ url: String, _ bytes: [UInt8], into store: DiskCacheStore? = nil,
             headers: [CacheMetadata.Header] = [.init("ETag", "\"v1\"")]) throws -> CacheEntry {
        let store = store ?? self.store
        let key = try CacheKey(url: url)
        let writer = try store.makeWriter(for: key.hex)
        try bytes.withUnsafeBytes { try writer.append($0) }
        return try writer.commit(CacheMetadata(url: key.normalizedURL, status: 200, requestTime: 1, responseTime: 2, headers: headers))
    }

    func copy(_ entry: CacheEntry) -> CacheMetadata? {
        store.readMetadataAttribute(key: entry.key, bodyPath: entry.bodyPath)
    }

    @Test func aHitReadsTheCopyOnTheBody() throws {
        let entry = try put("https://x.test/a.png", Array(repeating: 1, count: 500))
        #expect(copy(entry) == entry.metadata, "the commit puts the metadata on the body")
        #expect(truncate(entry.metadataPath, 10) == 0)
        #expect(store.lookup(entry.key)?.metadata == entry.metadata, "the copy answers without the metadata file")
        #expect(store.lookup(entry.key, url: "https://x.test/a.png")?.metadata == entry.metadata)
        #expect(store.lookup(entry.key, url: "https://x.test/other.png") == nil)
        let link = directory + "/" + MD5.hex("https://x.test/alias.png")
        #expect(symlink(entry.bodyPath, link) == 0)
        #expect(store.lookup(MD5.hex("https://x.test/alias.png")) == nil, "a symlink is not followed to another body's copy")
        // A store that keeps no copies reads the (damaged) metadata file: a miss.
        let plain = try DiskCacheStore(directory: directory, metadataAttributes: false)
        #expect(plain.lookup(entry.key) == nil)
    }

    /// Where the kernel has no `getxattrat`, the copy is read by its whole path.
    @Test func theCopyIsReadByPathOnOlderKernels() throws {
        DiskCacheStore.readAttributesByPath()
        let entry = try put("https://x.test/old-kernel.png", Array(repeating: 1, count: 500))
        #expect(copy(entry) == entry.metadata)
        #expect(truncate(entry.metadataPath, 10) == 0)
        #expect(store.lookup(entry.key)?.metadata == entry.metadata)
        let link = directory + "/" + MD5.hex("https://x.test/link.png")
        #expect(symlink(entry.bodyPath, link) == 0)
        #expect(store.lookup(MD5.hex("https://x.test/link.png")) == nil, "a symlink is not followed")
    }

    @Test func entriesWithoutACopyAreReadFromTheMetadataFile() throws {
        let plain = try DiskCacheStore(directory: directory, metadataAttributes: false)
        let entry = try put("https://x.test/plain.png", Array(repeating: 2, count: 300), into: plain)
        #expect(copy(entry) == nil)
        #expect(store.lookup(entry.key)?.metadata == entry.metadata)
        // Metadata larger than a hit's 4 KiB read: the file decides too.
        let large = try put("https://x.test/large.png", Array(repeating: 3, count: 100),
                            headers: (0..<60).map { .init("X-Header-\($0)", String(repeating: "v", count: 100)) })
        #expect(store.lookup(large.key)?.metadata == large.metadata)
    }

    @Test func aRevalidationReplacesTheCopy() throws {
        let entry = try put("https://x.test/r.png", Array(repeating: 4, count: 200))
        var meta = entry.metadata
        meta.headers = [.init("ETag", "\"v2\""), .init("Cache-Control", "max-age=60")]
        let updated = try store.updateMetadata(of: entry, to: meta)
        #expect(copy(entry) == updated.metadata)
        #expect(store.lookup(entry.key)?.metadata.header("ETag") == "\"v2\"")
    }

    /// A body moved to another key's name carries its copy along: the copy
    /// names another URL, so it is not that key's entry.
    @Test func aBodyRenamedToAnotherKeyIsNotThatKeysEntry() throws {
        let a = try put("https://x.test/a.png", Array(repeating: 5, count: 100))
        let b = try put("https://x.test/b.png", Array(repeating: 6, count: 100))
        #expect(rename(a.bodyPath, b.bodyPath) == 0)
        #expect(store.lookup(b.key) == nil)
        #expect(store.lookup(b.key, url: "https://x.test/b.png") == nil)
        #expect(try store.scan().broken.map(\.key).contains(b.key))
    }

    /// A kill between a commit's two renames leaves the new body beside the
    /// old metadata file, and the copy is only written after both: the body
    /// has none yet, so it is a miss (never the old metadata's hit), and
    /// `verify` removes the pair. A body whose copy disagrees with the
    /// metadata file beside it is not made by any commit.
    @Test func aKillBetweenTheRenamesLeavesAMissNotAMismatch() throws {
        let first = try put("https://x.test/k.png", Array(repeating: 7, count: 100))
        let oldMetadata = try Data(contentsOf: URL(fileURLWithPath: first.metadataPath))
        // The state after the body's rename: a new body without a copy, the old metadata file.
        let plain = try DiskCacheStore(directory: directory, metadataAttributes: false)
        let second = try put("https://x.test/k.png", Array(repeating: 8, count: 250), into: plain)
        try oldMetadata.write(to: URL(fileURLWithPath: second.metadataPath))
        #expect(copy(second) == nil)
        #expect(store.lookup(second.key) == nil)
        #expect(try store.verify().removed.count == 1)
        // After a whole commit the copy and the file agree.
        let third = try put("https://x.test/k.png", Array(repeating: 9, count: 300))
        #expect(copy(third) == third.metadata)
        let file = Array(try Data(contentsOf: URL(fileURLWithPath: third.metadataPath)))
        #expect(file.withUnsafeBytes { CacheMetadata.decode($0) } == third.metadata)
    }

    /// A kill between a 304's metadata rename and its copy leaves the older
    /// copy of the same body: same validators and digest, older freshness.
    @Test func aRevalidationKilledBeforeItsCopyLeavesTheSameBodysOlderCopy() throws {
        let entry = try put("https://x.test/r2.png", Array(repeating: 4, count: 200))
        let plain = try DiskCacheStore(directory: directory, metadataAttributes: false)
        var meta = entry.metadata
        meta.headers += [.init("Cache-Control", "max-age=60")]
        let updated = try plain.updateMetadata(of: entry, to: meta)   // the file only
        let hit = try #require(store.lookup(entry.key))
        #expect(hit.metadata.bodyMD5 == updated.metadata.bodyMD5 && hit.metadata.header("ETag") == updated.metadata.header("ETag"))
        #expect(hit.metadata.header("Cache-Control") == nil, "the older copy")
    }

    @Test func aRememberedErrorReplacesABodyAndItsCopy() throws {
        let entry = try put("https://x.test/gone.png", Array(repeating: 9, count: 100))
        try store.storeWithoutBody(CacheMetadata(url: entry.metadata.url, status: 404, requestTime: 1, responseTime: 2,
                                                 headers: []), key: entry.key)
        let hit = try #require(store.lookup(entry.key))
        #expect(!hit.metadata.hasBody && hit.metadata.status == 404)
        #expect(!FileManager.default.fileExists(atPath: entry.bodyPath))
    }
}
