import DiskCache
import Foundation
import Testing
import TestSupport

/// The last use (LRU) is the body's atime: the cache's own reads must not
/// move it, a marked access must, on ext4 with relatime (/tmp here) and on
/// tmpfs (/dev/shm). The body's mtime, which the metadata records, stays.
@Suite struct DiskCacheAccessTimeTests {
    static var filesystems: [String] {
        ["/tmp"] + (FileManager.default.isWritableFile(atPath: "/dev/shm") ? ["/dev/shm"] : [])
    }

    func atime(_ path: String) -> Double {
        var info = stat()
        _ = stat(path, &info)
        return Double(info.st_atim.tv_sec) + Double(info.st_atim.tv_nsec) / 1e9
    }

    @Test(arguments: filesystems)
    func readsKeepAndMarksMoveTheAccessTime(parent: String) throws {
        let temp = try TempDirectory()
        let store = try DiskCacheStore(directory: parent == "/tmp" ? temp.path + "/c" : parent + "/asyncfetch-atime-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { if parent != "/tmp" { try? FileManager.default.removeItem(atPath: store.directory) } }
        let writer = try store.makeWriter(for: MD5.hex("https://x.test/a"))
        try [UInt8](repeating: 1, count: 100).withUnsafeBytes { try writer.append($0) }
        let entry = try writer.commit(CacheMetadata(url: "https://x.test/a", status: 200, requestTime: 1, responseTime: 2, headers: []))
        // Two hours ago, older than the mtime: relatime would update it on the next read.
        let past = Date().timeIntervalSince1970 - 7200
        let times = [timespec(tv_sec: Int(past), tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)]   // mtime: UTIME_OMIT
        #expect(entry.accessPath == entry.bodyPath)
        #expect(utimensat(AT_FDCWD, entry.accessPath, times, 0) == 0)
        for _ in 0..<3 {
            let hit = try #require(store.lookup(entry.key))
            #expect(abs(hit.lastAccess - past) < 1)
            _ = try store.scan()
            _ = try store.verify()   // rereads every body
        }
        #expect(abs(atime(entry.accessPath) - past) < 1, "lookups and scans must not count as uses")
        store.markAccessed(try #require(store.lookup(entry.key)))
        let now = Date().timeIntervalSince1970
        #expect(abs(atime(entry.accessPath) - now) < 5)
        // A second use within the resolution writes nothing.
        let recent = atime(entry.accessPath)
        usleep(20_000)
        store.markAccessed(try #require(store.lookup(entry.key)))
        #expect(atime(entry.accessPath) == recent)
        #expect(store.lookup(entry.key)?.metadata.bodyLength == 100, "marking a use must not break the entry")
    }

    /// A revalidation is a use; a bodiless entry (a remembered 404) keeps
    /// its last use on its metadata file.
    @Test func revalidationsCountAndBodilessEntriesUseTheirMetadata() throws {
        let temp = try TempDirectory()
        let store = try DiskCacheStore(directory: temp.path + "/c")
        let past = Date().timeIntervalSince1970 - 7200
        let times = [timespec(tv_sec: Int(past), tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)]
        let writer = try store.makeWriter(for: MD5.hex("https://x.test/a"))
        try [UInt8](repeating: 1, count: 100).withUnsafeBytes { try writer.append($0) }
        let meta = CacheMetadata(url: "https://x.test/a", status: 200, requestTime: 1, responseTime: 2, headers: [])
        let stored = try writer.commit(meta)
        #expect(utimensat(AT_FDCWD, stored.accessPath, times, 0) == 0)
        let old = try #require(store.lookup(stored.key))
        #expect(abs(old.lastAccess - past) < 1)
        var before = stat()
        #expect(stat(stored.bodyPath, &before) == 0)
        let updated = try store.updateMetadata(of: old, to: meta)
        let now = Date().timeIntervalSince1970
        #expect(abs(atime(stored.bodyPath) - now) < 5 && abs(updated.lastAccess - now) < 5)
        var after = stat()
        #expect(stat(stored.bodyPath, &after) == 0)
        #expect(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
                "a revalidation's use must not move the body's mtime")
        #expect(store.lookup(stored.key) != nil)
        #expect(try store.updateMetadata(of: updated, to: meta).recordOnBody, "the next 304 still finds the body its own")

        // A remembered error: its record is on an empty file, whose atime records uses; in a
        // sidecar directory it is the sidecar's.
        let record = try store.storeWithoutBody(CacheMetadata(url: "https://x.test/gone", status: 404, requestTime: 1,
                                                              responseTime: 2, headers: []), key: MD5.hex("https://x.test/gone"))
        #expect(record.accessPath == record.bodyPath)
        let sidecars = try DiskCacheStore(directory: temp.path + "/sidecars", metadataAttributes: false)
        let gone = try sidecars.storeWithoutBody(CacheMetadata(url: "https://x.test/gone", status: 404, requestTime: 1,
                                                               responseTime: 2, headers: []), key: MD5.hex("https://x.test/gone"))
        #expect(gone.accessPath == gone.metadataPath)
        #expect(utimensat(AT_FDCWD, gone.accessPath, times, 0) == 0)
        #expect(abs(try #require(sidecars.lookup(gone.key)).lastAccess - past) < 1)
        #expect(try #require(sidecars.lookup(gone.key, accessTime: false)).lastAccess == 0)
        #expect(sidecars.markAccessed(gone.key))
        #expect(abs(atime(gone.metadataPath) - Date().timeIntervalSince1970) < 5)
    }
}
