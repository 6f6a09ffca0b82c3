@testable import DiskCache
import Testing
import TestSupport

/// The streamed body digest is `xxhsum -H2`'s for every length class XXH3
/// treats apart (up to 16, 128 and 240 bytes, then stripes of 64 in blocks
/// of 1 KiB, its 256-byte internal buffer) and however the body arrives:
/// whole, or in pieces that straddle its buffer and blocks.
@Suite struct BodyHashTests {
    static let lengths = [0, 1, 16, 17, 128, 129, 240, 241, 255, 256, 257, 1023, 1024, 1025, 12_420, 100_003]

    static func body(_ length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: ($0 &* 131) ^ ($0 >> 7)) }
    }

    static func streamed(_ body: [UInt8], pieces size: Int) throws -> String {
        let hash = try BodyHash()
        body.withUnsafeBytes { raw in
            var start = 0
            while start < raw.count {
                let end = min(start + size, raw.count)
                hash.update(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
                start = end
            }
        }
        return hash.hex()
    }

    @Test(arguments: lengths)
    func theDigestIsXXH3AsXxhsumPrintsIt(length: Int) throws {
        let body = Self.body(length)
        let reference = try ReferenceDigest.xxh3(body)
        for size in [max(length, 1), 1, 7, 64, 255, 4096] {
            #expect(try Self.streamed(body, pieces: size) == reference, "\(length) bytes in pieces of \(size)")
        }
    }

    @Test(arguments: lengths)
    func theDigestARecordKeepsSpellsTheSameHex(length: Int) throws {
        // `stored()`: what a download's record keeps, its 16 bytes, which the encoder spells.
        let body = Self.body(length)
        let hash = try BodyHash()
        body.withUnsafeBytes { hash.update($0) }
        let stored = hash.stored()
        guard case .digest = stored else {
            Issue.record("an XXH3 digest is kept as its bytes")
            return
        }
        #expect(stored.text == (try ReferenceDigest.xxh3(body)))
        #expect(stored.text == hash.hex())
    }

    @Test func aResetDigestStartsOverAndARestoredOneContinues() throws {
        let body = Self.body(5000)
        let hash = try BodyHash()
        body.withUnsafeBytes { hash.update(UnsafeRawBufferPointer(rebasing: $0[0..<3000])) }
        let kept = try BodyHash()
        kept.restore(from: hash)
        hash.reset()
        body.withUnsafeBytes { hash.update($0) }
        body.withUnsafeBytes { kept.update(UnsafeRawBufferPointer(rebasing: $0[3000...])) }
        let reference = try ReferenceDigest.xxh3(body)
        #expect(hash.hex() == reference && kept.hex() == reference)
    }
}

/// A writer given a body whole, as an array (a body the transfer held: `CacheWriter.append(_: [UInt8])`),
/// hashes it in one call at the end; any other way it arrives, it streams. The digest its entry
/// records is `xxhsum -H2`'s either way, however the two ways mix and after a reset.
@Suite struct CacheWriterDigestTests {
    @Test(arguments: [0, 1, 240, 241, 12_420, 70_000])
    func anEntryRecordsTheBodysDigestHoweverTheBodyArrived(length: Int) throws {
        let temp = try TempDirectory(prefix: "asyncfetch-writer-digest")
        let store = try DiskCacheStore(directory: temp.path + "/cache")
        let body = BodyHashTests.body(length)
        let half = length / 2
        let ways: [(String, (CacheWriter) throws -> Void)] = [
            ("whole, as an array", { try $0.append(body) }),
            ("whole, as bytes", { writer in try body.withUnsafeBytes { try writer.append($0) } }),
            ("an array, then bytes", { writer in
                try writer.append(Array(body[..<half]))
                try body.withUnsafeBytes { try writer.append(UnsafeRawBufferPointer(rebasing: $0[half...])) }
            }),
            ("two arrays", { try $0.append(Array(body[..<half])); try $0.append(Array(body[half...])) }),
            ("another body, reset, then this one as an array", { writer in
                try writer.append(BodyHashTests.body(333).reversed())
                try writer.reset()
                try writer.append(body)
            }),
            ("bytes, reset, then an array", { writer in
                try body.withUnsafeBytes { try writer.append($0) }
                try writer.reset()
                try writer.append(body)
            }),
        ]
        let reference = try ReferenceDigest.xxh3(body)
        for (index, (way, write)) in ways.enumerated() {
            let key = try CacheKey(url: "https://x.test/\(length)/\(index).png")
            let writer = try store.makeWriter(for: key.hex)
            try write(writer)
            #expect(writer.digest.algorithm == .xxh3 && writer.digest.hex == reference, "\(way): the digest before the commit")
            let entry = try writer.commit(CacheMetadata(url: key.storedURL, status: 200, requestTime: 1, responseTime: 2, headers: []))
            #expect(entry.metadata.digestAlgorithm == .xxh3 && entry.metadata.bodyDigest == reference, "\(length) bytes, \(way)")
            #expect(entry.metadata.bodyLength == Int64(length))
        }
    }
}
