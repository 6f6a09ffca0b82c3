#if canImport(Glibc)
import Glibc
#endif

/// The on-disk cache: `DIR/<md5>` holds a body byte for byte, `DIR/<md5>.meta`
/// its metadata, `DIR/.tmp/` bodies and metadata being written. Files of any
/// other name are not the cache's and are never touched (`CacheFileName`).
///
/// Writing follows the protocol documented on `CacheWriter`; a hit costs one
/// metadata read and one `stat` (see `lookup`). Maintenance (sweep, scan,
/// verify, prune, clear) lives in the `DiskCacheStore+…` files.
public final class DiskCacheStore: Sendable {
    public let directory: String
    let temporaryDirectory: String
    /// The cache directory, open for the store's life: lookups resolve names
    /// relative to it (one path component instead of the whole path), and
    /// `commitLock` locks it.
    let directoryFD: Int32
    let commitLock: CommitLock
    /// Whether bodies carry a copy of their metadata (`DiskCacheStore+Attribute.swift`).
    let attributes: AttributeSupport
    private let counter = Counter()

    /// Opens the cache at `directory`, creating it (and missing parents) with
    /// mode 0700. Throws a `.directory` error naming the path when it cannot
    /// be created, is not a directory, or cannot be read. A read-only
    /// directory opens: hits work, writes fail with `.io` errors.
    /// `metadataAttributes: false` keeps no metadata copy on bodies (hits
    /// then read the metadata files; for filesystems and tests that want that).
    public init(directory: String, metadataAttributes: Bool = true) throws(DiskCacheError) {
        try CacheDirectory.prepare(directory)
        self.directory = directory
        temporaryDirectory = CacheDirectory.join(directory, CacheFileName.temporaryDirectory)
        directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw DiskCacheError.system("cannot open cache directory", path: directory, kind: .directory) }
        commitLock = CommitLock(directoryFD: directoryFD)
        attributes = AttributeSupport(enabled: metadataAttributes)
    }

    deinit { _ = close(directoryFD) }

    public func bodyPath(_ key: String) -> String { directory + "/" + key }
    public func metadataPath(_ key: String) -> String { directory + "/" + key + CacheFileName.metadataSuffix }

    /// The intact entry for `key` (32 lowercase hex digits), or nil: absent,
    /// unreadable, foreign, partial, a body that is not the one its metadata
    /// describes, or metadata for another URL than `url` (the normalised
    /// URL, when the caller knows it). Never a crash.
    ///
    /// A hit costs one metadata read and one `stat` of the body, which also
    /// gives the last use (the body's atime): the read is the copy on the
    /// body (`lgetxattr`, see `DiskCacheStore+Attribute.swift`), else the
    /// metadata file (open, read, close).
    ///
    /// `accessTime` matters only for a bodiless entry (a remembered 404),
    /// whose last use is its metadata's atime: one more `stat` when asked
    /// for; without it `lastAccess` is 0 there.
    public func lookup(_ key: String, url: String? = nil, accessTime: Bool = true) -> CacheEntry? {
        guard CacheFileName.isKey(key) else { return nil }
        let path = bodyPath(key)
        if let meta = readMetadataAttribute(key: key, bodyPath: path),
           let body = statBody(key), Self.body(body, matches: meta),
           url.map({ meta.url == $0 }) ?? (MD5.hex(meta.url) == key) {
            // The copy travels with the body's inode: it must name this key's URL
            // (a body renamed to another key's name is not that key's entry).
            return CacheEntry(key: key, bodyPath: path, metadata: meta, lastAccess: seconds(body.st_atim))
        }
        guard let meta = readMetadataForHit(key), url.map({ meta.url == $0 }) ?? true else { return nil }
        var lastAccess = 0.0
        if meta.hasBody {
            guard let body = statBody(key), Self.body(body, matches: meta) else { return nil }
            lastAccess = seconds(body.st_atim)
        } else if accessTime {
            lastAccess = metadataStatus(key).map { seconds($0.st_atim) } ?? 0
        }
        return CacheEntry(key: key, bodyPath: path, metadata: meta, lastAccess: lastAccess)
    }

    /// Starts writing a new body for `key`; nothing is visible until `commit`.
    public func makeWriter(for key: String) throws(DiskCacheError) -> CacheWriter {
        try Self.validate(key)
        return try CacheWriter(store: self, key: key)
    }

    /// Records a bodiless entry (a remembered 404/410), removing any old body.
    @discardableResult
    public func storeWithoutBody(_ metadata: CacheMetadata, key: String) throws(DiskCacheError) -> CacheEntry {
        try Self.validate(key)
        var meta = metadata
        meta.hasBody = false
        meta.bodyLength = 0
        meta.bodyMD5 = ""
        meta.bodyInode = 0
        meta.bodyMtimeNs = 0
        meta.storedAt = currentTime()
        let file = try writeTemporaryMetadata(meta.encoded(), key: key)
        defer { file.discard() }
        try commitLock.withLock { () throws(DiskCacheError) in
            // The old body (and the metadata copy on it) goes first: until the
            // new metadata is in place, a reader misses rather than hits the old copy.
            if unlink(bodyPath(key)) != 0 && errno != ENOENT {
                throw DiskCacheError.system("cannot remove", path: bodyPath(key))
            }
            try file.publish(as: metadataPath(key))
        }
        return CacheEntry(key: key, bodyPath: bodyPath(key), metadata: meta,
                          lastAccess: meta.storedAt)
    }

    /// Replaces an entry's metadata, keeping its body (after a 304). If
    /// another writer replaced the body meanwhile, its complete entry is kept
    /// and returned instead (it is a newer copy of the same URL).
    @discardableResult
    public func updateMetadata(of entry: CacheEntry, to metadata: CacheMetadata) throws(DiskCacheError) -> CacheEntry {
        var meta = metadata
        meta.hasBody = entry.metadata.hasBody
        meta.bodyLength = entry.metadata.bodyLength
        meta.bodyMD5 = entry.metadata.bodyMD5
        meta.bodyInode = entry.metadata.bodyInode
        meta.bodyMtimeNs = entry.metadata.bodyMtimeNs
        meta.storedAt = currentTime()
        let encoded = meta.encoded()
        let file = try writeTemporaryMetadata(encoded, key: entry.key)
        defer { file.discard() }
        var lastAccess = meta.storedAt
        let replaced = try commitLock.withLock { () throws(DiskCacheError) -> Bool in
            if meta.hasBody {
                guard let body = statBody(entry.key), Self.body(body, matches: meta) else { return true }
                lastAccess = seconds(body.st_atim)
            }
            try file.publish(as: metadataPath(entry.key))
            if meta.hasBody { replaceMetadataAttribute(bodyPath: entry.bodyPath, encoded) }
            return false
        }
        if replaced {
            // Another writer replaced the entry meanwhile: its version stands, if it
            // still has a body (a remembered 404 stored meanwhile has none).
            guard let current = lookup(entry.key), current.metadata.hasBody == entry.metadata.hasBody else {
                throw DiskCacheError(.io, path: entry.bodyPath, message: "\(entry.bodyPath) was removed while it was being revalidated")
            }
            return current
        }
        // A revalidation is a use (for a bodiless entry, the new metadata file records it).
        if meta.storedAt - lastAccess >= CacheDefaults.accessTimeResolution, setAccessTime(entry.key) {
            lastAccess = meta.storedAt
        }
        return CacheEntry(key: entry.key, bodyPath: entry.bodyPath, metadata: meta, lastAccess: lastAccess)
    }

    /// Notes a use of the entry for LRU pruning, cheaply: the atime of its
    /// access file (`CacheEntry.accessPath`: the body, or the metadata of a
    /// bodiless entry) is set — one `utimensat`, content and mtime
    /// untouched — and only when the recorded use is older than
    /// `CacheDefaults.accessTimeResolution`. The cache's own reads never move
    /// it (metadata and `verify` read with `O_NOATIME` where allowed), so it
    /// works the same on `relatime`, `noatime` and tmpfs mounts; another
    /// program reading the body (an image viewer) counts as a use where the
    /// mount updates atimes.
    public func markAccessed(_ entry: CacheEntry, now: Double? = nil) {
        guard (now ?? currentTime()) - entry.lastAccess >= CacheDefaults.accessTimeResolution else { return }
        _ = setAccessTime(entry.metadata.hasBody ? entry.key : entry.key + CacheFileName.metadataSuffix)
    }

    /// Sets the entry's access time to now (its body's, or its metadata's
    /// when it has no body). Returns false when that failed (absent, or a
    /// read-only cache): LRU order is advice, so nothing else happens.
    @discardableResult
    public func markAccessed(_ key: String) -> Bool {
        guard CacheFileName.isKey(key) else { return false }
        return setAccessTime(key) || (errno == ENOENT && setAccessTime(key + CacheFileName.metadataSuffix))
    }

    private func setAccessTime(_ name: String) -> Bool {
        // UTIME_NOW and UTIME_OMIT are macros Swift does not import.
        let utimeNow = (1 << 30) - 1, utimeOmit = (1 << 30) - 2
        var times = (timespec(tv_sec: 0, tv_nsec: utimeNow), timespec(tv_sec: 0, tv_nsec: utimeOmit))
        return withUnsafePointer(to: &times) { pair in
            pair.withMemoryRebound(to: timespec.self, capacity: 2) { utimensat(directoryFD, name, $0, 0) == 0 }
        }
    }

    /// Removes an entry (the body first, with its metadata copy, so a
    /// concurrent reader misses rather than mismatches). Returns whether
    /// there was anything to remove.
    @discardableResult
    public func remove(_ key: String) throws(DiskCacheError) -> Bool {
        try Self.validate(key)
        return try commitLock.withLock { () throws(DiskCacheError) -> Bool in
            try unlinkEntryFiles(key)
        }
    }

    // MARK: - Internals shared with CacheWriter and the maintenance files

    /// Unlinks `<key>` then `<key>.meta` (regular files only: anything else
    /// with such a name is not the cache's); call with the commit lock held.
    /// The body goes first, with the metadata copy on it: in between (or
    /// after a kill), metadata without its body is a miss.
    func unlinkEntryFiles(_ key: String) throws(DiskCacheError) -> Bool {
        var removed = false
        for name in [key, key + CacheFileName.metadataSuffix] {
            var info = stat()
            guard fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            if unlinkat(directoryFD, name, 0) == 0 {
                removed = true
            } else if errno != ENOENT {
                throw DiskCacheError.system("cannot remove", path: directory + "/" + name)
            }
        }
        return removed
    }

    static func validate(_ key: String) throws(DiskCacheError) {
        guard CacheFileName.isKey(key) else {
            throw DiskCacheError(.invalidURL, path: "", message: "'\(key)' is not a cache key (32 lowercase hex digits)")
        }
    }

    /// The body's identity is the one the metadata records.
    static func body(_ info: stat, matches meta: CacheMetadata) -> Bool {
        (info.st_mode & S_IFMT) == S_IFREG
            && Int64(info.st_size) == meta.bodyLength
            && UInt64(info.st_ino) == meta.bodyInode
            && nanoseconds(info.st_mtim) == meta.bodyMtimeNs
    }

    func metadataStatus(_ key: String) -> stat? {
        var info = stat()
        guard fstatat(directoryFD, key + CacheFileName.metadataSuffix, &info, 0) == 0 else { return nil }
        return info
    }

    func statBody(_ key: String) -> stat? {
        var info = stat()
        guard fstatat(directoryFD, key, &info, 0) == 0 else { return nil }
        return info
    }

    func makeTemporaryName(for key: String) -> String {
        "\(temporaryDirectory)/\(key).\(Self.processID).\(counter.next())"
    }

    /// This process's id, read once (it is in every temporary name).
    static let processID = getpid()

    /// Creates a locked temporary file in `.tmp`. The folder is created when
    /// it is missing (ENOENT) rather than with a `mkdir` before every file:
    /// a download costs one system call less.
    ///
    /// A name can already exist: a killed run that had this process's pid
    /// (containers reuse pid 1) leaves files the sweep keeps for a minute.
    /// Then the next number is tried.
    func createTemporaryFile(for key: String, suffix: String = "") throws(DiskCacheError) -> TemporaryFile {
        var attempt = 0
        while true {
            attempt += 1
            let path = makeTemporaryName(for: key) + suffix
            do throws(DiskCacheError) {
                return try TemporaryFile(path: path)
            } catch where error.errno == ENOENT && attempt <= 2 {
                try ensureTemporaryDirectory()
            } catch where error.errno == EEXIST && attempt <= 1000 {
                continue
            }
        }
    }

    func ensureTemporaryDirectory() throws(DiskCacheError) {
        if mkdir(temporaryDirectory, 0o700) != 0 && errno != EEXIST {
            throw DiskCacheError.system("cannot create", path: temporaryDirectory)
        }
    }
}

func seconds(_ time: timespec) -> Double {
    Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
