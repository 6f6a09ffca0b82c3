import DiskCache
import Foundation
import Testing
import TestSupport

/// Leftovers of killed writers go; a live writer's files stay, whatever their age.
@Suite struct DiskCacheSweepTests {
    static let key = "0123456789abcdef0123456789abcdef"

    func leftover(_ cache: CacheFixture, pid: Int32, n: Int = 1, suffix: String = "", bytes: Int = 100) throws -> String {
        try FileManager.default.createDirectory(atPath: cache.directory + "/.tmp", withIntermediateDirectories: true)
        let path = cache.directory + "/.tmp/\(Self.key).\(pid).\(n)\(suffix)"
        try Data(count: bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func anEmptyOrMissingTemporaryDirectoryCostsNothing() throws {
        let cache = try CacheFixture()
        let report = cache.store.sweepTemporaryFiles()
        #expect(report.removed == 0 && report.kept == 0 && report.failures.isEmpty)
    }

    @Test func filesOfDeadWritersAreRemovedAtOnce() throws {
        let cache = try CacheFixture()
        let dead = try deadPid()
        let body = try leftover(cache, pid: dead, bytes: 1234)
        let meta = try leftover(cache, pid: dead, n: 2, suffix: ".meta", bytes: 10)
        let report = cache.store.sweepTemporaryFiles()
        #expect(report.removed == 2 && report.removedBytes == 1244)
        #expect(!FileManager.default.fileExists(atPath: body) && !FileManager.default.fileExists(atPath: meta))
    }

    @Test func unlockedFilesOfLivePidsWaitForTheGracePeriod() throws {
        let cache = try CacheFixture()
        // pid 1 is alive (in this namespace): it might be a writer between create and lock.
        let young = try leftover(cache, pid: 1)
        #expect(cache.store.sweepTemporaryFiles().kept == 1)
        #expect(FileManager.default.fileExists(atPath: young))
        cache.age(young, atime: 0, mtime: CacheDefaults.unlockedTemporaryGrace + 5)
        #expect(cache.store.sweepTemporaryFiles().removed == 1)
        #expect(!FileManager.default.fileExists(atPath: young))
    }

    @Test func aLiveWritersFilesAreNeverSweptHoweverOld() throws {
        let cache = try CacheFixture()
        let writer = try cache.store.makeWriter(for: Self.key)
        try [UInt8](repeating: 1, count: 1000).withUnsafeBytes { try writer.append($0) }
        // The writer's file has no name at all (O_TMPFILE): nothing a sweep could take.
        #expect(((try? cache.names("/.tmp")) ?? []).isEmpty)
        // A lock held by another open file (as another process would hold it), on a dead pid's name.
        let other = try leftover(cache, pid: try deadPid())
        let fd = open(other, O_RDONLY)
        #expect(fd >= 0 && flock(fd, LOCK_EX) == 0)
        let report = cache.store.sweepTemporaryFiles()
        #expect(report.removed == 0 && report.kept == 1)
        close(fd)
        #expect(cache.store.sweepTemporaryFiles().removed == 1, "the dead pid's file goes once its lock is free")
        // The writer still commits normally.
        let entry = try writer.commit(CacheMetadata(url: "https://x.test/", status: 200, requestTime: 1, responseTime: 2, headers: []))
        #expect(try bytes(of: entry.bodyPath) == [UInt8](repeating: 1, count: 1000))
    }

    @Test func foreignFilesInTheTemporaryDirectoryStay() throws {
        let cache = try CacheFixture()
        try FileManager.default.createDirectory(atPath: cache.directory + "/.tmp", withIntermediateDirectories: true)
        let foreign = ["notes.txt", Self.key + ".1.x", Self.key + ".meta", "download.part"].map { cache.directory + "/.tmp/" + $0 }
        for path in foreign {
            try Data("x".utf8).write(to: URL(fileURLWithPath: path))
            cache.age(path, atime: 0, mtime: 30 * 86400)
        }
        try FileManager.default.createDirectory(atPath: cache.directory + "/.tmp/\(Self.key).\(try deadPid()).1",
                                                withIntermediateDirectories: false)
        let report = cache.store.sweepTemporaryFiles()
        #expect(report.removed == 0)
        for path in foreign { #expect(FileManager.default.fileExists(atPath: path)) }
    }
}
