import DiskCache
import Foundation
import Testing
import TestSupport

@Suite struct DiskCacheStoreTests {
    func store() throws -> (DiskCacheStore, TempDirectory) {
        let temp = try TempDirectory()
        return (try DiskCacheStore(directory: temp.path + "/cache"), temp)
    }

    func write(_ store: DiskCacheStore, key: String, bytes: [UInt8]) throws -> CacheEntry {
        let writer = try store.makeWriter(for: key)
        try bytes.withUnsafeBytes { try writer.append($0) }
        return try writer.commit(CacheMetadata(url: "https://x.test/" + key, status: 200, requestTime: 1, responseTime: 2, headers: []))
    }

    @Test func directoryIsCreatedWithMode0700() throws {
        let (store, temp) = try store()
        defer { withExtendedLifetime(temp) {} }
        var info = stat()
        #expect(stat(store.directory, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
    }

    @Test func committedBodyIsByteExactAtTheKeyPath() throws {
        let (store, temp) = try store()
        defer { withExtendedLifetime(temp) {} }
        let key = MD5.hex("https://x.test/a")
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let entry = try write(store, key: key, bytes: bytes)
        #expect(entry.bodyPath == store.directory + "/" + key)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: entry.bodyPath))) == bytes)
        let found = try #require(store.lookup(key))
        #expect(found.metadata.bodyLength == Int64(bytes.count))
        #expect(try found.metadata.bodyDigest == ReferenceDigest.xxh3(bytes))
        #expect(found.metadata.digestAlgorithm == .xxh3)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: store.directory + "/.tmp")) ?? []).isEmpty)
    }

    @Test func aBodyThatNoLongerMatchesItsMetadataIsAMiss() throws {
        let (store, temp) = try store()
        defer { withExtendedLifetime(temp) {} }
        let key = MD5.hex("https://x.test/b")
        let entry = try write(store, key: key, bytes: Array(repeating: 1, count: 1000))
        // Truncated in place (a disk problem, a foreign tool): length differs.
        #expect(truncate(entry.bodyPath, 500) == 0)
        #expect(store.lookup(key) == nil)
    }

    @Test func aBodyReplacedBehindTheMetadataIsAMiss() throws {
        let (store, temp) = try store()
        let key = MD5.hex("https://x.test/c")
        let entry = try write(store, key: key, bytes: Array(repeating: 1, count: 1000))
        // Same length, different file (what a racing writer's rename does).
        let other = temp.path + "/other"
        #expect(FileManager.default.createFile(atPath: other, contents: Data(repeating: 2, count: 1000)))
        #expect(rename(other, entry.bodyPath) == 0)
        #expect(store.lookup(key) == nil)
    }

    @Test func anAbandonedWriterLeavesNothing() throws {
        let (store, temp) = try store()
        defer { withExtendedLifetime(temp) {} }
        let key = MD5.hex("https://x.test/d")
        let writer = try store.makeWriter(for: key)
        try Array(repeating: UInt8(3), count: 5000).withUnsafeBytes { try writer.append($0) }
        writer.abandon()
        #expect(store.lookup(key) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory).filter { $0 != ".tmp" }.isEmpty)
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: store.directory + "/.tmp")) ?? []).isEmpty)
    }

    @Test func anUnwritableDirectoryIsADirectoryError() throws {
        let temp = try TempDirectory()
        let path = temp.path + "/ro"
        #expect(mkdir(path, 0o500) == 0)
        defer { chmod(path, 0o700) }
        if getuid() == 0 {
            // root ignores permission bits; a file in the way shows the same error path.
            let blocked = temp.path + "/file"
            #expect(FileManager.default.createFile(atPath: blocked, contents: Data()))
            #expect(throws: DiskCacheError.self) { try DiskCacheStore(directory: blocked) }
        } else {
            #expect(throws: DiskCacheError.self) { try DiskCacheStore(directory: path + "/cache") }
        }
    }

    @Test func resolutionOrderFollowsTheSpec() throws {
        let env = ["ASYNCFETCH_CACHE_DIR": "/a", "XDG_CACHE_HOME": "/x", "HOME": "/h"]
        #expect(try CacheDirectory.resolve(explicit: "/cli", environment: env) == "/cli")
        #expect(try CacheDirectory.resolve(explicit: nil, environment: env) == "/a")
        #expect(try CacheDirectory.resolve(explicit: nil, environment: ["XDG_CACHE_HOME": "/x", "HOME": "/h"]) == "/x/asyncfetch")
        #expect(try CacheDirectory.resolve(explicit: nil, environment: ["XDG_CACHE_HOME": "rel", "HOME": "/h"]) == "/h/.cache/asyncfetch")
        #expect(try CacheDirectory.resolve(explicit: nil, environment: ["HOME": "/h"]) == "/h/.cache/asyncfetch")
        #expect(try CacheDirectory.resolve(explicit: nil, environment: [:]).hasSuffix("/.cache/asyncfetch"))
        // A relative HOME is ignored as an unset one is: the passwd entry's home.
        #expect(try CacheDirectory.resolve(explicit: nil, environment: ["HOME": "rel"])
                == CacheDirectory.resolve(explicit: nil, environment: [:]))
    }
}

@Suite struct TemporaryFolderTests {
    /// `.tmp` is created on demand, also when something removed it after
    /// the store was opened (another process's `cache clear`, a user's rm).
    @Test func aRemovedTemporaryFolderIsCreatedAgain() throws {
        let temp = try TempDirectory()
        let store = try DiskCacheStore(directory: temp.path + "/cache")
        rmdir(store.directory + "/.tmp")
        #expect(!FileManager.default.fileExists(atPath: store.directory + "/.tmp"))
        let key = MD5.hex("https://x.test/again")
        let writer = try store.makeWriter(for: key)
        try [UInt8](repeating: 9, count: 100).withUnsafeBytes { try writer.append($0) }
        _ = try writer.commit(CacheMetadata(url: "https://x.test/again", status: 200, requestTime: 1, responseTime: 2, headers: []))
        // A new version of an entry is named in .tmp before it replaces the old one.
        let second = try store.makeWriter(for: key)
        try [UInt8](repeating: 9, count: 100).withUnsafeBytes { try second.append($0) }
        let entry = try second.commit(CacheMetadata(url: "https://x.test/again", status: 200, requestTime: 1, responseTime: 2, headers: []))
        #expect(store.lookup(key)?.metadata.bodyLength == 100)
        var info = stat()
        #expect(stat(store.directory + "/.tmp", &info) == 0 && info.st_mode & 0o777 == 0o700)
        withExtendedLifetime(entry) {}
    }
}

@Suite struct TemporaryNameCollisionTests {
    /// Files left by a killed run that had this process's pid (a container's
    /// pid 1 run again) take the names this process would use first: the
    /// writer moves on to the next name and leaves those files alone.
    @Test func aTakenTemporaryNameIsSkippedAndNeverRemoved() throws {
        let temp = try TempDirectory()
        let store = try DiskCacheStore(directory: temp.path + "/cache")
        let key = MD5.hex("https://x.test/collide")
        let pid = getpid()
        mkdir(store.directory + "/.tmp", 0o700)
        var squatters: [String] = []
        for n in 1...3 {
            let path = store.directory + "/.tmp/\(key).\(pid).\(n)"
            #expect(FileManager.default.createFile(atPath: path, contents: Data("someone else's".utf8)))
            squatters.append(path)
        }
        let writer = try store.makeWriter(for: key)
        try [UInt8](repeating: 5, count: 64).withUnsafeBytes { try writer.append($0) }
        _ = try writer.commit(CacheMetadata(url: "https://x.test/collide", status: 200, requestTime: 1, responseTime: 2, headers: []))
        #expect(store.lookup(key)?.metadata.bodyLength == 64)
        for path in squatters {
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "someone else's", "\(path) must survive")
        }
    }

    /// A no-store body held for `-o` (`.deliver`) by a run that was killed is
    /// swept like any other leftover; a foreign name beside it is not.
    @Test func aLeftoverDeliveryFileIsSwept() throws {
        let temp = try TempDirectory()
        let store = try DiskCacheStore(directory: temp.path + "/cache")
        var deadPID: Int32 = 999_983
        while kill(deadPID, 0) == 0 || errno != ESRCH { deadPID -= 1 }
        mkdir(store.directory + "/.tmp", 0o700)
        let key = MD5.hex("https://x.test/nostore")
        let leftover = store.directory + "/.tmp/\(key).\(deadPID).7.deliver"
        let foreign = store.directory + "/.tmp/notes.deliver"
        #expect(FileManager.default.createFile(atPath: leftover, contents: Data(count: 4096)))
        #expect(FileManager.default.createFile(atPath: foreign, contents: Data(count: 10)))
        let report = store.sweepTemporaryFiles()
        #expect(report.removed == 1)
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(FileManager.default.fileExists(atPath: foreign))
    }
}

@Suite struct LookupWithoutAccessTimeTests {
    /// The `--offline` lookup (no fstat) finds the same entries as the full
    /// one, including metadata larger than its single 4 KiB read, and
    /// rejects the same damage. (Without the metadata copy on bodies: this
    /// is about reading the metadata file.)
    @Test func findsWhatTheFullLookupFinds() throws {
        let temp = try TempDirectory()
        let store = try DiskCacheStore(directory: temp.path + "/cache", metadataAttributes: false)
        func put(_ url: String, headers: [CacheMetadata.Header]) throws -> String {
            let key = MD5.hex(url)
            let writer = try store.makeWriter(for: key)
            try [UInt8](repeating: 3, count: 777).withUnsafeBytes { try writer.append($0) }
            _ = try writer.commit(CacheMetadata(url: url, status: 200, requestTime: 1, responseTime: 2, headers: headers))
            return key
        }
        let small = try put("https://x.test/small", headers: [.init("ETag", "\"1\"")])
        let large = try put("https://x.test/large", headers: (0..<60).map { .init("X-Header-\($0)", String(repeating: "v", count: 100)) })
        var info = stat()
        #expect(stat(store.metadataPath(large), &info) == 0 && info.st_size > 4096, "the large one must need more than one read")
        for key in [small, large] {
            let quick = try #require(store.lookup(key, accessTime: false))
            let full = try #require(store.lookup(key))
            #expect(quick.metadata == full.metadata)
            #expect(quick.lastAccess > 0 && quick.lastAccess == full.lastAccess, "the body's stat gives the last use")
        }
        #expect(truncate(store.metadataPath(small), 40) == 0)
        #expect(store.lookup(small, accessTime: false) == nil)
        #expect(store.lookup(MD5.hex("https://x.test/absent"), accessTime: false) == nil)
    }
}
