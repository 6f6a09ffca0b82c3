import DiskCache
import Foundation
import Testing
import TestSupport

/// A body's MD5 is computed inline for its first MiB and by tasks reading the
/// file back after that (`BodyDigest`): whatever the sizes of the pieces and
/// however the two meet, the recorded digest must be the body's, as
/// `md5sum` computes it.
@Suite struct BodyDigestTests {
    /// Deterministic bytes that differ everywhere (a repeated pattern could hide an offset error).
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    /// Appends `body` in pieces of pseudo-random sizes (1 byte to 300 KiB).
    static func append(_ body: [UInt8], to writer: CacheWriter, seed: UInt64) throws {
        var state = seed | 1
        var offset = 0
        try body.withUnsafeBytes { all in
            while offset < all.count {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let size = min(all.count - offset, 1 + Int(state >> 33) % (300 * 1024))
                try writer.append(UnsafeRawBufferPointer(rebasing: all[offset..<(offset + size)]))
                offset += size
            }
        }
    }

    static func md5sum(_ path: String) throws -> String {
        String(try runProcess("/usr/bin/md5sum", [path]).stdout.prefix(32))
    }

    @Test(arguments: [0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, (3 << 20) + 12_345, (9 << 20) + 7])
    func theRecordedDigestIsTheBodys(size: Int) throws {
        let cache = try CacheFixture()
        let body = Self.bytes(size, seed: UInt64(size) + 1)
        let key = try cache.key("https://x.test/\(size).png")
        let writer = try cache.store.makeWriter(for: key)
        try Self.append(body, to: writer, seed: UInt64(size))
        if size % 2 == 1 { usleep(50_000) }   // odd sizes: the tasks catch up before the commit; even: the commit hashes the rest
        let entry = try writer.commit(CacheMetadata(url: "https://x.test/\(size).png", status: 200,
                                                    requestTime: 1, responseTime: 2, headers: []))
        #expect(entry.metadata.bodyLength == Int64(size))
        #expect(entry.metadata.bodyMD5 == (try Self.md5sum(entry.bodyPath)))
        #expect(entry.metadata.bodyMD5 == MD5.hex(body))
        #expect(try cache.names("/.tmp").isEmpty)
    }

    @Test func aRetryAfterTheDigestFollowedTheFileHashesOnlyTheNewBody() throws {
        let cache = try CacheFixture()
        let key = try cache.key("https://x.test/retry.png")
        let writer = try cache.store.makeWriter(for: key)
        try Self.append(Self.bytes(3 << 20, seed: 7), to: writer, seed: 1)   // past the inline MiB: tasks follow
        usleep(50_000)   // and have hashed the first body when it is thrown away
        try writer.reset()
        let second = Self.bytes((5 << 19) + 3, seed: 8)
        try Self.append(second, to: writer, seed: 2)
        usleep(50_000)
        let entry = try writer.commit(CacheMetadata(url: "https://x.test/retry.png", status: 200,
                                                    requestTime: 1, responseTime: 2, headers: []))
        #expect(entry.metadata.bodyLength == Int64(second.count))
        #expect(entry.metadata.bodyMD5 == MD5.hex(second))
        #expect(entry.metadata.bodyMD5 == (try Self.md5sum(entry.bodyPath)))
    }

    @Test func abandoningWhileTheDigestFollowsLeavesNothing() throws {
        let cache = try CacheFixture()
        let chunk = Self.bytes(64 * 1024, seed: 3)
        for round in 0..<20 {
            let key = try cache.key("https://x.test/abandoned-\(round).png")
            let writer = try cache.store.makeWriter(for: key)
            for _ in 0..<96 { try chunk.withUnsafeBytes { try writer.append($0) } }   // 6 MiB
            if round % 2 == 0 {
                writer.abandon()
            }   // odd rounds: the writer is just dropped
        }
        #expect(try cache.names("/.tmp").isEmpty)
        #expect(try cache.names().filter { $0 != ".tmp" }.isEmpty)
        // The store still works: the tasks that were still queued did nothing to it.
        let entry = try cache.put("https://x.test/after.png", Self.bytes(2 << 20, seed: 4))
        #expect(entry.metadata.bodyMD5 == (try Self.md5sum(entry.bodyPath)))
    }
}
