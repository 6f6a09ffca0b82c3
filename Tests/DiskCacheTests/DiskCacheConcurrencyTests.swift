import DiskCache
import Foundation
import Testing
import TestSupport

/// Many writers of one key, and readers beside them: every hit is a body its
/// metadata describes, and the last committer's entry ends up intact.
@Suite struct DiskCacheConcurrencyTests {
    @Test func racingWritersOfOneKeyLeaveAnIntactEntry() async throws {
        let cache = try CacheFixture()
        let url = "https://x.test/contended.png"
        let key = try cache.key(url)
        let store = cache.store
        let bodies = (0..<8).map { i in [UInt8](repeating: UInt8(i), count: 20_000 + i * 1000) }
        await withTaskGroup(of: Void.self) { group in
            for round in 0..<10 {
                for (i, body) in bodies.enumerated() {
                    group.addTask {
                        do {
                            let writer = try store.makeWriter(for: key)
                            try body.withUnsafeBytes { try writer.append($0) }
                            _ = try writer.commit(CacheMetadata(url: url, status: 200, requestTime: Double(round), responseTime: Double(i),
                                                                headers: [.init("ETag", "\"\(i)\"")]))
                        } catch {
                            Issue.record("a writer failed: \(error)")
                        }
                    }
                }
                group.addTask {
                    for _ in 0..<50 {
                        guard let hit = store.lookup(key) else { continue }
                        let onDisk = (try? bytes(of: hit.bodyPath)) ?? []
                        // The file may be replaced after the lookup; when it is not, it must match.
                        if onDisk.count == hit.metadata.bodyLength && (try? ReferenceDigest.xxh3(onDisk)) != hit.metadata.bodyDigest {
                            Issue.record("a hit whose body does not match its metadata")
                        }
                    }
                }
            }
        }
        let entry = try #require(store.lookup(key), "the last commit must leave an intact entry")
        let etag = try #require(entry.metadata.header("ETag"))
        let index = try #require(Int(etag.dropFirst().dropLast()))
        #expect(try bytes(of: entry.bodyPath) == bodies[index])
        #expect(try ReferenceDigest.xxh3(bodies[index]) == entry.metadata.bodyDigest)
        let report = try store.verify()
        #expect(report.removed.isEmpty && report.intact == 1)
        #expect(try cache.names("/.tmp").isEmpty)
    }
}
