#if canImport(Glibc)
import Glibc
#endif

/// Streams one body into the cache.
///
/// The write protocol, which is what makes a hit trustworthy under SIGKILL at
/// any instant and with any number of processes sharing the directory:
///
/// 1. The body streams into `DIR/.tmp/<md5>.<pid>.<n>` (created exclusively,
///    mode 0600); its MD5 is computed on the way. Nothing outside `.tmp`
///    changes, so a kill here leaves only a leftover for the sweep.
/// 2. `commit`: `fsync`, `fstat` (inode, size, mtime), `rename` onto
///    `DIR/<md5>`. Rename is atomic: readers see the old file or the new one.
/// 3. The metadata, which records that inode, size, mtime and digest, is
///    written to `.tmp`, `fsync`ed and renamed onto `DIR/<md5>.meta`.
///
/// A reader (`DiskCacheStore.lookup`) accepts an entry only when the file at
/// `DIR/<md5>` has the inode, size and mtime its metadata names. A kill
/// between 2 and 3 leaves new body + old metadata: they disagree, so it is a
/// miss. Two writers racing on one key end with whichever metadata was
/// renamed last; it matches the body only if that writer's body is the one in
/// place, otherwise the entry is a miss until the next write. So a hit
/// never serves a body its metadata does not describe.
///
/// Threading: one owner at a time (the fetch engine's loop thread while the
/// transfer runs, the awaiting task before and after).
public final class CacheWriter: @unchecked Sendable {
    public let key: String
    public let temporaryPath: String
    private let store: DiskCacheStore
    private var fd: Int32
    private let digest: StreamingMD5
    public private(set) var bytesWritten: Int64 = 0
    /// The first `headLimit` bytes, kept for image sniffing without rereading the file.
    public private(set) var head: [UInt8] = []
    public static let headLimit = 64 * 1024

    init(store: DiskCacheStore, key: String) throws(DiskCacheError) {
        self.store = store
        self.key = key
        digest = try StreamingMD5()
        temporaryPath = store.makeTemporaryName(for: key)
        fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 { throw DiskCacheError.system("cannot create", path: temporaryPath) }
    }

    deinit {
        if fd >= 0 {
            close(fd)
            unlink(temporaryPath)
        }
    }

    public func append(_ bytes: UnsafeRawBufferPointer) throws(DiskCacheError) {
        guard fd >= 0 else { throw DiskCacheError(.io, path: temporaryPath, message: "write after close: \(temporaryPath)") }
        guard var base = bytes.baseAddress, bytes.count > 0 else { return }
        if head.count < Self.headLimit {
            let take = min(Self.headLimit - head.count, bytes.count)
            head.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
        }
        digest.update(bytes)
        var left = bytes.count
        while left > 0 {
            let n = write(fd, base, left)
            if n < 0 {
                if errno == EINTR { continue }
                throw DiskCacheError.system("cannot write", path: temporaryPath)
            }
            left -= n
            base += n
        }
        bytesWritten += Int64(bytes.count)
    }

    /// Starts over (a retried download).
    public func reset() throws(DiskCacheError) {
        guard fd >= 0, ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw DiskCacheError.system("cannot truncate", path: temporaryPath)
        }
        digest.reset()
        head.removeAll()
        bytesWritten = 0
    }

    /// Publishes the body and `metadata` (whose body fields are filled in
    /// here) as the entry for this key. See the protocol above.
    public func commit(_ metadata: CacheMetadata) throws(DiskCacheError) -> CacheEntry {
        guard fd >= 0 else { throw DiskCacheError(.io, path: temporaryPath, message: "commit after close: \(temporaryPath)") }
        defer { abandon() }
        guard fsync(fd) == 0 else { throw DiskCacheError.system("cannot sync", path: temporaryPath) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw DiskCacheError.system("cannot stat", path: temporaryPath) }
        let closed = close(fd)
        fd = -1
        guard closed == 0 else { throw DiskCacheError.system("cannot close", path: temporaryPath) }
        var meta = metadata
        meta.hasBody = true
        meta.bodyLength = Int64(info.st_size)
        meta.bodyMD5 = digest.finalize()
        meta.bodyInode = UInt64(info.st_ino)
        meta.bodyMtimeNs = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        let bodyPath = store.bodyPath(key)
        guard rename(temporaryPath, bodyPath) == 0 else { throw DiskCacheError.system("cannot rename into", path: bodyPath) }
        try store.writeMetadata(meta, key: key)
        return CacheEntry(key: key, bodyPath: bodyPath, metadataPath: store.metadataPath(key), metadata: meta,
                          lastAccess: currentTime())
    }

    /// Closes and deletes the temporary file. Safe to call more than once.
    public func abandon() {
        if fd >= 0 {
            close(fd)
            fd = -1
        }
        unlink(temporaryPath)
    }
}

func currentTime() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
