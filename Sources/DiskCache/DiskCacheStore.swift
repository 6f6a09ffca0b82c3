#if canImport(Glibc)
import Glibc
#endif

/// The on-disk cache: `DIR/<md5>` holds a body byte for byte, `DIR/<md5>.meta`
/// its metadata, `DIR/.tmp/` bodies and metadata being written. Files of any
/// other name are not the cache's and are never touched.
///
/// A hit costs one metadata read and one `stat` (see `lookup`).
public final class DiskCacheStore: Sendable {
    public let directory: String
    let temporaryDirectory: String
    private let counter = Counter()

    /// Opens (creating with mode 0700 if needed) the cache at `directory`.
    public init(directory: String) throws(DiskCacheError) {
        self.directory = directory
        temporaryDirectory = CacheDirectory.join(directory, ".tmp")
        try CacheDirectory.prepare(directory)
    }

    public func bodyPath(_ key: String) -> String { directory + "/" + key }
    public func metadataPath(_ key: String) -> String { directory + "/" + key + ".meta" }

    /// The intact entry for `key`, or nil: absent, unreadable, foreign,
    /// partial, or a body that is not the one its metadata describes.
    public func lookup(_ key: String) -> CacheEntry? {
        let metaPath = metadataPath(key)
        guard let (meta, atime) = readMetadata(metaPath) else { return nil }
        let body = bodyPath(key)
        if meta.hasBody {
            var info = stat()
            guard stat(body, &info) == 0,
                  Int64(info.st_size) == meta.bodyLength,
                  UInt64(info.st_ino) == meta.bodyInode,
                  Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec) == meta.bodyMtimeNs
            else { return nil }
        }
        return CacheEntry(key: key, bodyPath: body, metadataPath: metaPath, metadata: meta, lastAccess: atime)
    }

    /// Starts writing a new body for `key`; nothing is visible until `commit`.
    public func makeWriter(for key: String) throws(DiskCacheError) -> CacheWriter {
        try ensureTemporaryDirectory()
        return try CacheWriter(store: self, key: key)
    }

    /// Records a bodiless entry (a remembered 404/410), removing any old body.
    @discardableResult
    public func storeWithoutBody(_ metadata: CacheMetadata, key: String) throws(DiskCacheError) -> CacheEntry {
        var meta = metadata
        meta.hasBody = false
        meta.bodyLength = 0
        meta.bodyMD5 = ""
        meta.bodyInode = 0
        meta.bodyMtimeNs = 0
        try ensureTemporaryDirectory()
        try writeMetadata(meta, key: key)
        unlink(bodyPath(key))
        return CacheEntry(key: key, bodyPath: bodyPath(key), metadataPath: metadataPath(key), metadata: meta,
                          lastAccess: currentTime())
    }

    /// Replaces an entry's metadata, keeping its body (after a 304). If the
    /// body changed meanwhile, the new metadata will not match it: a miss.
    @discardableResult
    public func updateMetadata(of entry: CacheEntry, to metadata: CacheMetadata) throws(DiskCacheError) -> CacheEntry {
        var meta = metadata
        meta.hasBody = entry.metadata.hasBody
        meta.bodyLength = entry.metadata.bodyLength
        meta.bodyMD5 = entry.metadata.bodyMD5
        meta.bodyInode = entry.metadata.bodyInode
        meta.bodyMtimeNs = entry.metadata.bodyMtimeNs
        try ensureTemporaryDirectory()
        try writeMetadata(meta, key: entry.key)
        return CacheEntry(key: entry.key, bodyPath: entry.bodyPath, metadataPath: entry.metadataPath, metadata: meta,
                          lastAccess: currentTime())
    }

    /// Notes a use of the entry for LRU pruning: sets the metadata file's
    /// atime (one `utimensat`, content untouched).
    public func markAccessed(_ key: String) {
        // UTIME_NOW and UTIME_OMIT are macros Swift does not import.
        let utimeNow = (1 << 30) - 1, utimeOmit = (1 << 30) - 2
        var times = [timespec(tv_sec: 0, tv_nsec: utimeNow), timespec(tv_sec: 0, tv_nsec: utimeOmit)]
        _ = utimensat(AT_FDCWD, metadataPath(key), &times, 0)
    }

    /// Removes an entry (metadata first, so a concurrent reader misses rather than mismatches).
    public func remove(_ key: String) throws(DiskCacheError) {
        for path in [metadataPath(key), bodyPath(key)] where unlink(path) != 0 && errno != ENOENT {
            throw DiskCacheError.system("cannot remove", path: path)
        }
    }

    // MARK: - Internals shared with CacheWriter

    func makeTemporaryName(for key: String) -> String {
        "\(temporaryDirectory)/\(key).\(getpid()).\(counter.next())"
    }

    func ensureTemporaryDirectory() throws(DiskCacheError) {
        if mkdir(temporaryDirectory, 0o700) != 0 && errno != EEXIST {
            throw DiskCacheError.system("cannot create", path: temporaryDirectory)
        }
    }

    func writeMetadata(_ meta: CacheMetadata, key: String) throws(DiskCacheError) {
        let temporary = makeTemporaryName(for: key) + ".meta"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DiskCacheError.system("cannot create", path: temporary) }
        var ok = true
        var failedErrno: Int32 = 0
        let bytes = meta.encoded()
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    ok = false
                    failedErrno = errno
                    return
                }
                offset += n
            }
        }
        if ok && fsync(fd) != 0 { ok = false; failedErrno = errno }
        if close(fd) != 0 && ok { ok = false; failedErrno = errno }
        guard ok else {
            unlink(temporary)
            throw DiskCacheError.system("cannot write", path: temporary, errno: failedErrno)
        }
        let final = metadataPath(key)
        guard rename(temporary, final) == 0 else {
            let code = errno
            unlink(temporary)
            throw DiskCacheError.system("cannot rename into", path: final, errno: code)
        }
    }

    /// Reads and parses a metadata file; also returns its atime.
    func readMetadata(_ path: String) -> (CacheMetadata, Double)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0, info.st_size < 1 << 20 else { return nil }
        let size = Int(info.st_size)
        let meta = withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { buffer -> CacheMetadata? in
            var offset = 0
            while offset < size {
                let n = read(fd, buffer.baseAddress! + offset, size - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return nil }
                offset += n
            }
            return CacheMetadata.decode(UnsafeRawBufferPointer(buffer))
        }
        guard let meta else { return nil }
        return (meta, Double(info.st_atim.tv_sec) + Double(info.st_atim.tv_nsec) / 1e9)
    }
}

/// A thread-safe counter for unique temporary names within this process.
final class Counter: @unchecked Sendable {
    private var value: UInt64 = 0
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }
    func next() -> UInt64 {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        value += 1
        return value
    }
}
