import DiskCache
import Foundation
import Support
import Testing
import TestSupport

/// A corrupt, partial or foreign entry is a miss, never a crash or a hang.
@Suite struct DiskCacheRobustnessTests {
    static let url = "https://x.test/robust.png"

    @Test func foreignFilesWithOurNamesAreMisses() throws {
        let cache = try CacheFixture()
        let key = try cache.key(Self.url)
        let meta = cache.store.metadataPath(key)
        let body = cache.store.bodyPath(key)
        let cases: [(String, () throws -> Void)] = [
            ("empty metadata", { try Data().write(to: URL(fileURLWithPath: meta)) }),
            ("text metadata", { try Data("hello\n".utf8).write(to: URL(fileURLWithPath: meta)) }),
            ("zeros", { try Data(count: 4096).write(to: URL(fileURLWithPath: meta)) }),
            ("2 MB of metadata", { try Data(repeating: 0x61, count: 2 << 20).write(to: URL(fileURLWithPath: meta)) }),
            ("metadata is a directory", { try FileManager.default.createDirectory(atPath: meta, withIntermediateDirectories: false) }),
            ("metadata is a FIFO", { #expect(mkfifo(meta, 0o600) == 0) }),
            ("metadata is a symlink to /dev/zero", { #expect(symlink("/dev/zero", meta) == 0) }),
            ("metadata is a dangling symlink", { #expect(symlink(cache.directory + "/nowhere", meta) == 0) }),
        ]
        for (name, make) in cases {
            _ = try? FileManager.default.removeItem(atPath: meta)
            try make()
            let outcome = Self.lookupOutcome(cache.store, key, unblocking: meta)
            #expect(outcome == "miss", "\(name) must be a miss, and must not block")
        }
        _ = try? FileManager.default.removeItem(atPath: meta)
        // Good metadata, but the body's name holds a directory.
        try cache.put(Self.url, [1, 2, 3])
        #expect(unlink(body) == 0)
        try FileManager.default.createDirectory(atPath: body, withIntermediateDirectories: false)
        #expect(cache.store.lookup(key) == nil)
    }

    /// `lookup(key)` run on a thread of its own: "miss", "hit", or "blocked" if it
    /// has not returned after 30 s (a blocking open of a FIFO waits for a writer
    /// forever: the test then fails instead of hanging). The 30 s only ends a hang;
    /// a lookup that works returns at once. A FIFO at `path` is then opened for
    /// writing and closed, so that the stuck lookup ends too.
    static func lookupOutcome(_ store: DiskCacheStore, _ key: String, unblocking path: String) -> String {
        let outcome = Locked("blocked")
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let found = store.lookup(key) != nil
            outcome.withLock { $0 = found ? "hit" : "miss" }
            done.signal()
        }
        if done.wait(timeout: .now() + 30) == .timedOut {
            let writer = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if writer >= 0 { close(writer) }
            return "blocked"
        }
        return outcome.withLock { $0 }
    }

    @Test func lookupRefusesNamesThatAreNotKeys() throws {
        let cache = try CacheFixture()
        try cache.put(Self.url, [1])
        for name in ["../x", "", "/etc/passwd", (try cache.key(Self.url)).uppercased()] {
            #expect(cache.store.lookup(name) == nil)
            #expect(throws: DiskCacheError.self) { try cache.store.makeWriter(for: name) }
        }
    }

    @Test func aTruncatedBodyIsAMissAndVerifyRemovesIt() throws {
        let cache = try CacheFixture()
        let entry = try cache.put(Self.url, Array(repeating: 9, count: 10_000))
        #expect(truncate(entry.bodyPath, 4_000) == 0)
        #expect(cache.store.lookup(entry.key) == nil)
        let report = try cache.store.verify()
        #expect(report.removed.map(\.key) == [entry.key])
        #expect(report.removed.first?.url == Self.url)
        #expect(try cache.names().filter { $0 != ".tmp" } == [".asyncfetch-store"])
    }

    @Test func aBodyWithTheSameSizeButOtherBytesIsFoundByVerify() throws {
        let cache = try CacheFixture()
        let entry = try cache.put(Self.url, Array(repeating: 7, count: 50_000))
        let other = try cache.put("https://x.test/other.png", Array(repeating: 8, count: 10))
        // Flip one byte in place and restore the mtime: what bit rot looks like.
        var before = stat()
        #expect(stat(entry.bodyPath, &before) == 0)
        let handle = try #require(FileHandle(forUpdatingAtPath: entry.bodyPath))
        try handle.seek(toOffset: 25_000)
        try handle.write(contentsOf: [0xFF])
        try handle.close()
        let times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, entry.bodyPath, times, 0) == 0)
        #expect(cache.store.lookup(entry.key) != nil, "the cheap check cannot see it")
        let report = try cache.store.verify()
        #expect(report.checked == 2 && report.intact == 1)
        #expect(report.removed.map(\.key) == [entry.key])
        #expect(report.removed.first?.reason.contains("xxh3-128") == true)
        #expect(cache.store.lookup(entry.key) == nil)
        #expect(cache.store.lookup(other.key) != nil)
    }

    @Test func metadataMovedToAnotherKeyIsFoundByVerify() throws {
        let cache = try CacheFixture()
        let sidecars = try DiskCacheStore(directory: cache.directory, metadataAttributes: false)
        let writer = try sidecars.makeWriter(for: try cache.key("https://x.test/a.png"))
        try [UInt8]([1, 2, 3]).withUnsafeBytes { try writer.append($0) }
        let a = try writer.commit(CacheMetadata(url: "https://x.test/a.png", status: 200, requestTime: 1, responseTime: 2, headers: []))
        let bKey = try cache.key("https://x.test/b.png")
        #expect(rename(a.bodyPath, cache.store.bodyPath(bKey)) == 0)
        #expect(rename(a.metadataPath, cache.store.metadataPath(bKey)) == 0)
        let report = try cache.store.verify()
        #expect(report.removed.map(\.key) == [bKey])
        #expect(report.removed.first?.reason.contains("another key") == true)
    }
}
