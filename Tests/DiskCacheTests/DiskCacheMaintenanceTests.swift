import DiskCache
import Foundation
import Testing
import TestSupport

@Suite struct DiskCacheMaintenanceTests {
    @Test func scanCountsOnlyTheCachesOwnFiles() throws {
        let cache = try CacheFixture()
        let a = try cache.put("https://x.test/a.png", Array(repeating: 1, count: 1000))
        try cache.put("https://x.test/b.png", Array(repeating: 2, count: 3000))
        try Data(count: 999_999).write(to: URL(fileURLWithPath: cache.directory + "/foreign.bin"))
        try Data(count: 10).write(to: URL(fileURLWithPath: cache.directory + "/" + String(repeating: "A", count: 32)))
        let orphan = cache.store.bodyPath(try cache.key("https://x.test/orphan.png"))
        try Data(count: 500).write(to: URL(fileURLWithPath: orphan))
        let scan = try cache.store.scan()
        #expect(scan.intact.count == 2)
        // A key-named file without any metadata is not the cache's (it never leaves one): named, not counted.
        #expect(scan.broken.isEmpty)
        #expect(scan.unowned == [orphan])
        #expect(a.recordOnBody && !FileManager.default.fileExists(atPath: a.metadataPath), "one file per entry")
        #expect(scan.bytes == 1000 + 3000)
    }

    @Test func pruneEvictsLeastRecentlyUsedFirst() throws {
        let cache = try CacheFixture()
        var entries: [String: CacheEntry] = [:]
        for (name, hoursAgo) in [("a", 5.0), ("b", 1.0), ("c", 3.0), ("d", 2.0)] {
            let entry = try cache.put("https://x.test/\(name).png", Array(repeating: 1, count: 10_000))
            cache.ageUse(entry, hoursAgo * 3600)
            entries[name] = entry
        }
        let scanned = try cache.store.scan().entries
        let keep = Set([entries["b"]!.key, entries["d"]!.key])
        let budget = scanned.filter { keep.contains($0.key) }.reduce(Int64(0)) { $0 + $1.bytes }
        // Room for two entries: a (5 h) and c (3 h) go.
        var report = try cache.store.prune(maxBytes: budget, maxAge: nil)
        #expect(report.removed == 2 && report.remaining == 2)
        #expect(cache.store.lookup(entries["a"]!.key) == nil && cache.store.lookup(entries["c"]!.key) == nil)
        #expect(cache.store.lookup(entries["b"]!.key) != nil && cache.store.lookup(entries["d"]!.key) != nil)
        // Unused for more than 90 minutes: d (2 h) goes, b (1 h) stays.
        report = try cache.store.prune(maxBytes: nil, maxAge: 90 * 60)
        #expect(report.removed == 1)
        #expect(cache.store.lookup(entries["d"]!.key) == nil && cache.store.lookup(entries["b"]!.key) != nil)
    }

    /// A broken entry (a body cut short behind its metadata's back) goes
    /// whatever its age, even when older healthy entries are within the
    /// limits and stay.
    @Test func pruneRemovesBrokenEntriesEvenWhenRecentlyTouched() throws {
        let cache = try CacheFixture()
        let healthy = try cache.put("https://x.test/old-but-fine.png", Array(repeating: 1, count: 1000))
        cache.ageUse(healthy, 5 * 3600)
        let broken = try cache.put("https://x.test/cut.png", Array(repeating: 2, count: 1000))
        #expect(truncate(broken.bodyPath, 500) == 0)   // just written: the most recent
        let report = try cache.store.prune(maxBytes: 1 << 30, maxAge: 30 * 24 * 3600)
        #expect(report.removed == 1)
        #expect(!FileManager.default.fileExists(atPath: broken.bodyPath))
        #expect(cache.store.lookup(healthy.key) != nil)
    }

    /// The cache never leaves a key-named file without metadata (CacheWriter
    /// publishes the record with the body, or a sidecar first), so such a
    /// file is someone else's: verify names it and, like prune, clear and
    /// rm, leaves it. A body whose record of ours is damaged is the cache's:
    /// verify removes it.
    @Test func aKeyNamedFileWithoutMetadataIsNotTheCachesOwn() throws {
        let cache = try CacheFixture()
        try cache.put("https://x.test/a.png", [1, 2, 3])
        let key = try cache.key("https://x.test/mine.png")
        let path = cache.store.bodyPath(key)
        try Data("my own notes".utf8).write(to: URL(fileURLWithPath: path))
        let damaged = try cache.put("https://x.test/damaged.png", [4, 5, 6])
        #expect(setRecordBytes(damaged.bodyPath, Array("garbage".utf8)))
        let verified = try cache.store.verify()
        #expect(verified.unowned == [path])
        #expect(verified.removed.map(\.key) == [damaged.key])
        #expect(verified.checked == 2 && verified.intact == 1)
        #expect(try cache.store.prune(maxBytes: 1, maxAge: 0).remaining == 0)
        #expect(try cache.store.remove(key) == false)
        #expect(try cache.store.clear().failures.isEmpty)
        #expect(try bytes(of: path) == Array("my own notes".utf8))
        #expect(try cache.names().filter { $0 != ".tmp" && $0 != ".partial" } == [".asyncfetch-store", key])
    }

    /// The sidecar protocol shows no instant with a body but no metadata:
    /// a writer publishes new keys (sidecar, then body: a first write has no
    /// old sidecar to hide behind) while a reader watches each: once the body
    /// is there, its sidecar must be too (nothing removes it here).
    @Test func sidecarWritersNeverShowABodyWithoutMetadata() async throws {
        let temp = try TempDirectory(prefix: "asyncfetch-cache")
        let store = try DiskCacheStore(directory: temp.path + "/sidecars", metadataAttributes: false)
        let keys = try (0..<1500).map { try CacheKey(url: "https://x.test/\($0).png") }
        let progress = WriterProgress()
        let writer = Task.detached {
            defer { progress.set(keys.count) }
            for (index, key) in keys.enumerated() {
                progress.set(index)
                let writer = try store.makeWriter(for: key.hex)
                try [UInt8(truncatingIfNeeded: index)].withUnsafeBytes { try writer.append($0) }
                _ = try writer.commit(CacheMetadata(url: key.normalizedURL, status: 200, requestTime: 1, responseTime: 2, headers: []))
            }
        }
        var seen = 0, watched = 0
        while case let index = progress.get(), index < keys.count {
            var info = stat()
            if lstat(store.bodyPath(keys[index].hex), &info) == 0 {
                watched += 1
                if lstat(store.metadataPath(keys[index].hex), &info) != 0 { seen += 1 }
            }
        }
        try await writer.value
        #expect(seen == 0, "a body without metadata was visible \(seen) times (of \(watched) bodies seen)")
        #expect(try store.scan().intact.count == keys.count)
    }

    @Test func aMarkedAccessMovesAnEntryToTheBackOfTheQueue() throws {
        let cache = try CacheFixture()
        let old = try cache.put("https://x.test/old.png", Array(repeating: 1, count: 1000))
        let newer = try cache.put("https://x.test/newer.png", Array(repeating: 1, count: 1000))
        cache.ageUse(old, 7200)
        cache.ageUse(newer, 3600)
        cache.store.markAccessed(try #require(cache.store.lookup(old.key)))
        let report = try cache.store.prune(maxBytes: try cache.store.scan().bytes - 1, maxAge: nil)
        #expect(report.removed == 1)
        #expect(cache.store.lookup(old.key) != nil)
        #expect(cache.store.lookup(newer.key) == nil)
    }

    /// A cache written before uses were recorded on the body keeps its
    /// history: the metadata's atime still counts.
    @Test func pruneCountsAUseRecordedOnTheMetadata() throws {
        let cache = try CacheFixture()
        let sidecars = try DiskCacheStore(directory: cache.directory, metadataAttributes: false)
        let key = try CacheKey(url: "https://x.test/used-before.png")
        let writer = try sidecars.makeWriter(for: key.hex)
        try [UInt8](repeating: 1, count: 1000).withUnsafeBytes { try writer.append($0) }
        let entry = try writer.commit(CacheMetadata(url: key.storedURL, status: 200, requestTime: 1, responseTime: 2, headers: []))
        cache.age(entry.bodyPath, atime: 40 * 86400)
        cache.age(entry.metadataPath, atime: 86400)
        var report = try cache.store.prune(maxBytes: nil, maxAge: 30 * 86400)
        #expect(report.removed == 0 && cache.store.lookup(entry.key) != nil)
        cache.ageUse(entry, 40 * 86400)
        report = try cache.store.prune(maxBytes: nil, maxAge: 30 * 86400)
        #expect(report.removed == 1 && cache.store.lookup(entry.key) == nil)
    }

    @Test func pruneRemovesBrokenEntriesFirst() throws {
        let cache = try CacheFixture()
        let good = try cache.put("https://x.test/good.png", Array(repeating: 1, count: 100))
        cache.ageUse(good, 30 * 86400)
        let bad = try cache.put("https://x.test/bad.png", Array(repeating: 1, count: 100))
        #expect(truncate(bad.bodyPath, 10) == 0)
        let report = try cache.store.prune(maxBytes: nil, maxAge: 365 * 86400)
        #expect(report.removed == 1)
        #expect(cache.store.lookup(good.key) != nil)
        #expect(!FileManager.default.fileExists(atPath: bad.bodyPath))
    }

    /// A directory or symlink with a key's name is not the cache's: never
    /// counted, verified, pruned or reported as something that could not be removed.
    @Test func keyLikeDirectoriesAndSymlinksAreForeign() throws {
        let cache = try CacheFixture()
        let a = try cache.put("https://x.test/a.png", [1, 2, 3])
        try cache.put("https://x.test/b.png", [4, 5])
        let directory = cache.directory + "/" + (try cache.key("https://x.test/dir"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let link = cache.directory + "/" + (try cache.key("https://x.test/link"))
        #expect(symlink(a.bodyPath, link) == 0)
        let scan = try cache.store.scan()
        #expect(scan.entries.count == 2 && scan.broken.isEmpty)
        let verified = try cache.store.verify()
        #expect(verified.checked == 2 && verified.removed.isEmpty)
        let pruned = try cache.store.prune(maxBytes: 1, maxAge: nil)
        #expect(pruned.removed == 2 && pruned.remaining == 0 && pruned.failures.isEmpty)
        var info = stat()
        #expect(lstat(directory, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR)
        #expect(lstat(link, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK)
        let cleared = try cache.store.clear()
        #expect(cleared.removed == 0 && cleared.remaining == 0 && cleared.failures.isEmpty)
    }

    @Test func clearAndRemoveTouchOnlyTheCachesOwnFiles() throws {
        let cache = try CacheFixture()
        let a = try cache.put("https://x.test/a.png", [1])
        try cache.put("https://x.test/b.png", [2])
        let foreign = ["notes.txt", String(repeating: "F", count: 32), a.key + ".meta.bak", a.key + ".json", ".hidden"]
        for name in foreign { try Data("mine".utf8).write(to: URL(fileURLWithPath: cache.directory + "/" + name)) }
        let keyLikeDirectory = cache.directory + "/" + (try cache.key("https://x.test/dir"))
        try FileManager.default.createDirectory(atPath: keyLikeDirectory, withIntermediateDirectories: false)
        #expect(try cache.store.remove(a.key))
        #expect(try cache.store.remove(a.key) == false)
        let report = try cache.store.clear()
        #expect(report.removed == 1)
        #expect(report.remaining == 0 && report.failures.isEmpty)
        #expect(try cache.names().filter { $0 != ".tmp" }
                == ([".asyncfetch-store", keyLikeDirectory.split(separator: "/").last.map(String.init)!] + foreign).sorted())
    }
}

/// The key a test's writer thread is at, for the thread that watches it.
private final class WriterProgress: @unchecked Sendable {
    private let lock = NSLock()
    private var index = -1
    func set(_ value: Int) { lock.withLock { index = value } }
    func get() -> Int { lock.withLock { max(index, 0) } }
}
