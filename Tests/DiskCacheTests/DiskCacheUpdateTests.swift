import DiskCache
import Foundation
import Testing
import TestSupport

/// Metadata-only writes (a 304, a remembered 404) keep the body/metadata pair consistent.
@Suite struct DiskCacheUpdateTests {
    static let url = "https://x.test/update.png"

    @Test func aRevalidationKeepsTheBodyAndRecordsTheNewMetadata() throws {
        let cache = try CacheFixture()
        let entry = try cache.put(Self.url, [1, 2, 3], headers: [.init("ETag", "\"1\"")])
        var meta = entry.metadata
        meta.headers = [.init("ETag", "\"1\""), .init("Cache-Control", "max-age=60")]
        let updated = try cache.store.updateMetadata(of: entry, to: meta)
        let found = try #require(cache.store.lookup(entry.key))
        #expect(found.metadata.header("Cache-Control") == "max-age=60")
        #expect(found.metadata.bodyDigest == entry.metadata.bodyDigest && updated.bodyPath == entry.bodyPath)
        #expect(found.metadata.storedAt >= entry.metadata.storedAt)
    }

    @Test func aRevalidationRacingANewDownloadKeepsTheDownload() throws {
        let cache = try CacheFixture()
        let old = try cache.put(Self.url, [1, 2, 3], headers: [.init("ETag", "\"old\"")])
        let new = try cache.put(Self.url, [4, 5, 6, 7], headers: [.init("ETag", "\"new\"")])
        // The 304 for the old copy arrives after the new body was committed.
        let result = try cache.store.updateMetadata(of: old, to: old.metadata)
        #expect(result.metadata.header("ETag") == "\"new\"")
        let found = try #require(cache.store.lookup(old.key))
        #expect(found.metadata.bodyDigest == new.metadata.bodyDigest)
        #expect(try bytes(of: found.bodyPath) == [4, 5, 6, 7])
    }

    @Test func aRememberedErrorReplacesTheBody() throws {
        let cache = try CacheFixture()
        let entry = try cache.put(Self.url, [1, 2, 3])
        let meta = CacheMetadata(url: Self.url, status: 404, requestTime: 1, responseTime: 2, headers: [.init("Cache-Control", "max-age=60")])
        try cache.store.storeWithoutBody(meta, key: entry.key)
        let found = try #require(cache.store.lookup(entry.key))
        #expect(!found.metadata.hasBody && found.metadata.status == 404)
        #expect(try bytes(of: entry.bodyPath).isEmpty, "the body is gone: an empty file carries the record")
        #expect(try cache.store.verify().intact == 1)
    }
}
