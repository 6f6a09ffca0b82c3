import DiskCache
import Foundation
import TestSupport

/// A store in a fresh temporary directory, and small helpers to fill it.
struct CacheFixture {
    let temp: TempDirectory
    let store: DiskCacheStore
    var directory: String { store.directory }

    init(under parent: String? = nil) throws {
        temp = try TempDirectory(prefix: "asyncfetch-cache")
        store = try DiskCacheStore(directory: (parent ?? temp.path) + "/cache-\(UInt32.random(in: 0...UInt32.max))")
    }

    /// Stores `bytes` as the body of `url` (the key is the URL's MD5, as the loader does it).
    @discardableResult
    func put(_ url: String, _ bytes: [UInt8], headers: [CacheMetadata.Header] = []) throws -> CacheEntry {
        let key = try CacheKey(url: url)
        let writer = try store.makeWriter(for: key.hex)
        try bytes.withUnsafeBytes { try writer.append($0) }
        return try writer.commit(CacheMetadata(url: key.normalizedURL, status: 200, requestTime: 1, responseTime: 2, headers: headers))
    }

    func key(_ url: String) throws -> String { try CacheKey(url: url).hex }

    /// Names in the cache directory (hidden ones included), sorted.
    func names(_ sub: String = "") throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory + sub).sorted()
    }

    /// Makes the entry's last use `secondsAgo` before now: the atime of its
    /// body and of its metadata (a scan takes the later of the two).
    func ageUse(_ entry: CacheEntry, _ secondsAgo: Double) {
        age(entry.bodyPath, atime: secondsAgo)
        age(entry.metadataPath, atime: secondsAgo)
    }

    /// Sets a file's atime and mtime to `secondsAgo` before now.
    func age(_ path: String, atime: Double? = nil, mtime: Double? = nil) {
        var info = stat()
        _ = stat(path, &info)
        let now = Date().timeIntervalSince1970
        func spec(_ ago: Double?, _ current: timespec) -> timespec {
            guard let ago else { return current }
            let t = now - ago
            return timespec(tv_sec: Int(t), tv_nsec: Int((t - t.rounded(.down)) * 1e9))
        }
        let times = [spec(atime, info.st_atim), spec(mtime, info.st_mtim)]
        _ = utimensat(AT_FDCWD, path, times, 0)
    }
}

/// The pid of a process that has exited.
func deadPid() throws -> Int32 {
    let child = try startProcess("/bin/true", [])
    _ = child.wait()
    return child.pid
}

func bytes(of path: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: path)))
}
