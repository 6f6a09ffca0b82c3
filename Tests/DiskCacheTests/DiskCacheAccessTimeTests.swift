import DiskCache
import Foundation
import Testing
import TestSupport

/// The last use (LRU) is the metadata's atime: reads must not move it, a
/// marked access must, on ext4 with relatime (/tmp here) and on tmpfs (/dev/shm).
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
        let times = [timespec(tv_sec: Int(past), tv_nsec: 0), timespec(tv_sec: Int(past), tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, entry.metadataPath, times, 0) == 0)
        for _ in 0..<3 {
            let hit = try #require(store.lookup(entry.key))
            #expect(abs(hit.lastAccess - past) < 1)
            _ = try store.scan()
        }
        #expect(abs(atime(entry.metadataPath) - past) < 1, "lookups and scans must not count as uses")
        store.markAccessed(try #require(store.lookup(entry.key)))
        let now = Date().timeIntervalSince1970
        #expect(abs(atime(entry.metadataPath) - now) < 5)
        // A second use within the resolution writes nothing.
        let recent = atime(entry.metadataPath)
        usleep(20_000)
        store.markAccessed(try #require(store.lookup(entry.key)))
        #expect(atime(entry.metadataPath) == recent)
    }
}
