@testable import DiskCache
import Foundation
import Testing
import TestSupport

/// A body's MD5 is computed inline for its first MiB and by tasks reading the
/// file back after that (`BodyDigest`): whatever the sizes of the pieces and
/// however the steps and `finish` meet, the recorded digest must be the
/// body's, and no step may read the file once it is closed.
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

    /// Pseudo-random piece sizes from 1 to `largest` that add up to `total`.
    static func pieces(_ total: Int, largest: Int, seed: UInt64) -> [Range<Int>] {
        var state = seed | 1
        var ranges: [Range<Int>] = []
        var offset = 0
        while offset < total {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let size = min(total - offset, 1 + Int(state >> 33) % largest)
            ranges.append(offset..<(offset + size))
            offset += size
        }
        return ranges
    }

    /// A file to digest, written the way `CacheWriter` writes it (then the
    /// digest is told), with the digest under test reading it back.
    final class Subject {
        let fd: Int32
        let digest: BodyDigest
        let path: String

        init(_ temp: TempDirectory, _ name: String, inlineLimit: Int64, step: Int64, readable: Bool = true) throws {
            path = temp.file(name)
            fd = open(path, (readable ? O_RDWR : O_WRONLY) | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            #expect(fd >= 0)
            digest = try BodyDigest(fd: fd, path: path, inlineLimit: inlineLimit, step: step)
        }

        deinit { close(fd) }

        func append(_ body: [UInt8], _ pieces: [Range<Int>]) {
            body.withUnsafeBytes { all in
                for range in pieces {
                    let piece = UnsafeRawBufferPointer(rebasing: all[range])
                    #expect(write(fd, piece.baseAddress, piece.count) == piece.count)
                    digest.append(piece)
                }
            }
        }

        /// Waits (without blocking a pool thread) until the steps have hashed `count` bytes.
        func waitUntilHashed(_ count: Int64) async throws {
            let deadline = Date().addingTimeInterval(10)
            while digest.progress.hashed < count && Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        }
    }

    @Test(arguments: [0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, (3 << 20) + 12_345, (9 << 20) + 7])
    func theRecordedDigestIsTheBodys(size: Int) throws {
        let cache = try CacheFixture()
        let body = Self.bytes(size, seed: UInt64(size) + 1)
        let key = try cache.key("https://x.test/\(size).png")
        let writer = try cache.store.makeWriter(for: key)
        body.withUnsafeBytes { all in
            for range in Self.pieces(size, largest: 300 * 1024, seed: UInt64(size)) {
                #expect(throws: Never.self) { try writer.append(UnsafeRawBufferPointer(rebasing: all[range])) }
            }
        }
        let entry = try writer.commit(CacheMetadata(url: "https://x.test/\(size).png", status: 200,
                                                    requestTime: 1, responseTime: 2, headers: []))
        #expect(entry.metadata.bodyLength == Int64(size))
        #expect(entry.metadata.bodyMD5 == MD5.hex(body))
        #expect(entry.metadata.bodyMD5 == String(try runProcess("/usr/bin/md5sum", [entry.bodyPath]).stdout.prefix(32)))
        #expect(try cache.names("/.tmp").isEmpty)
    }

    @Test func stepsFollowTheStreamAndFinishHashesTheRest() async throws {
        let temp = try TempDirectory()
        let subject = try Subject(temp, "follow", inlineLimit: 0, step: 4096)
        let first = Self.bytes(512 * 1024, seed: 1)
        subject.append(first, Self.pieces(first.count, largest: 9000, seed: 2))
        try await subject.waitUntilHashed(Int64(first.count))
        let progress = subject.digest.progress
        #expect(progress.hashed == Int64(first.count), "the steps did not catch up")
        #expect(progress.stepReads > 0)
        let second = Self.bytes(100_000, seed: 3)
        subject.append(second, Self.pieces(second.count, largest: 5000, seed: 4))
        #expect(try subject.digest.finish() == MD5.hex(first + second))
    }

    @Test func finishWhileStepsRunGivesTheBodysDigest() async throws {
        let temp = try TempDirectory()
        var subjects: [Subject] = []
        for round in 0..<300 {
            let seed = UInt64(round) + 11
            let body = Self.bytes(Int(seed * 7919 % 200_000), seed: seed)
            let inlineLimit: Int64 = [0, 1000, 1 << 20][round % 3]
            let subject = try Subject(temp, "r\(round)", inlineLimit: inlineLimit, step: Int64(1 + round * 31 % 8192))
            subject.append(body, Self.pieces(body.count, largest: 20_000, seed: seed))
            #expect(try subject.digest.finish() == MD5.hex(body), "round \(round)")
            subjects.append(subject)
        }
        try await Task.sleep(nanoseconds: 100_000_000)   // steps still queued run now, and must do nothing
        #expect(subjects.allSatisfy { $0.digest.progress.readsAfterClose == 0 })
    }

    @Test func afterCloseNoStepReadsTheFile() async throws {
        let temp = try TempDirectory()
        for round in 0..<8 {
            // Large pieces and 1 KiB steps: the steps are far behind when the digest is closed.
            let subject = try Subject(temp, "c\(round)", inlineLimit: 0, step: 1024)
            let body = Self.bytes(4 << 20, seed: UInt64(round))
            subject.append(body, Self.pieces(body.count, largest: 2 << 20, seed: UInt64(round)))
            subject.digest.close()
            let hashed = subject.digest.progress.hashed
            try await Task.sleep(nanoseconds: 20_000_000)
            let after = subject.digest.progress
            #expect(after.hashed == hashed && after.readsAfterClose == 0, "round \(round)")
        }
    }

    @Test func aRetryStartsTheDigestOver() async throws {
        let temp = try TempDirectory()
        let subject = try Subject(temp, "retry", inlineLimit: 1000, step: 4096)
        let first = Self.bytes(300_000, seed: 5)
        subject.append(first, Self.pieces(first.count, largest: 7000, seed: 6))
        try await subject.waitUntilHashed(Int64(first.count))   // the steps hashed the body that is thrown away
        subject.digest.reset()
        #expect(ftruncate(subject.fd, 0) == 0 && lseek(subject.fd, 0, SEEK_SET) == 0)
        let second = Self.bytes(250_003, seed: 7)
        subject.append(second, Self.pieces(second.count, largest: 7000, seed: 8))
        #expect(try subject.digest.finish() == MD5.hex(second))
    }

    /// A file the steps cannot read: `finish` must fail, not record the digest of what it managed to read.
    @Test func aFileThatCannotBeReadBackIsAnError() throws {
        let temp = try TempDirectory()
        let subject = try Subject(temp, "unreadable", inlineLimit: 0, step: 1, readable: false)
        let body = Self.bytes(10_000, seed: 9)
        subject.append(body, Self.pieces(body.count, largest: 1000, seed: 10))
        #expect(throws: DiskCacheError.self) { _ = try subject.digest.finish() }
    }

    @Test func abandonedAndDroppedWritersLeaveNothing() throws {
        let cache = try CacheFixture()
        let chunk = Self.bytes(64 * 1024, seed: 3)
        for round in 0..<10 {
            let writer = try cache.store.makeWriter(for: try cache.key("https://x.test/abandoned-\(round).png"))
            for _ in 0..<48 { try chunk.withUnsafeBytes { try writer.append($0) } }   // 3 MiB: steps are queued
            if round % 2 == 0 { writer.abandon() }   // odd rounds: the writer is just dropped
        }
        #expect(try cache.names("/.tmp").isEmpty)
        #expect(try cache.names().filter { $0 != ".tmp" }.isEmpty)
    }
}
