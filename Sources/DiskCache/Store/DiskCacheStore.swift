#if canImport(Glibc)
import Glibc
#endif
import CCrypto
import Support
import Synchronization

/// The on-disk cache (SPEC §4): one file per entry. `DIR/<md5>` holds a body
/// byte for byte, and its metadata lives on the same inode, in the extended
/// attribute `user.asyncfetch.meta` (`DiskCacheStore+Attribute.swift`);
/// only where the file system refuses that, or the record is too large for
/// one, a sidecar `DIR/<md5>.meta` holds it. `DIR/.tmp/` holds the names of
/// files for the instant they are being published (and whole files being
/// written where there is no `O_TMPFILE`). Files of any other name are not
/// the cache's and are never touched (`CacheFileName`).
///
/// Writing follows the protocol documented on `CacheWriter`; a hit costs one
/// metadata read and one `stat` (see `lookup`). Maintenance (sweep, scan,
/// verify, prune, clear) lives in the `DiskCacheStore+…` files.
public final class DiskCacheStore: Sendable {
    public let directory: String
    /// What a name in the directory follows in its path: `directory` and a
    /// slash, or `/` alone for the root (never `//<md5>`).
    let namePrefix: String
    let temporaryDirectory: String
    /// The cache directory, open for the store's life: lookups resolve names
    /// relative to it, unnamed files are created in it, and `commitLock`
    /// locks it.
    let directoryFD: Int32
    /// Orders the two renames of a sidecar entry against other sidecar
    /// writers and removals. Entries whose record is on the body need none.
    let commitLock: CommitLock
    let placement: MetadataPlacement
    /// Whether `DIR/.partial` existed when first asked (0 not yet asked, 1
    /// yes, 2 no): a run in a cache without kept parts pays no look-up per URL.
    let partialFolderState = Atomic<UInt8>(0)
    /// Numbers the temporary names of this store (`makeTemporaryName`).
    let temporaryNames = Locked<UInt64>(0)

    /// Opens the cache at `directory`, creating it (and missing parents) with
    /// mode 0700. Throws a `.directory` error naming the path when it cannot
    /// be created, is not a directory, or cannot be read. A read-only
    /// directory opens: hits work, writes fail with `.io` errors.
    /// `directory` is kept `CacheDirectory.normalized` (`/tmp/c/` is
    /// `/tmp/c`), so the paths the store hands out have no `//`.
    /// `metadataAttributes: false` keeps metadata in sidecars only, as on a
    /// file system without user extended attributes (for tests).
    public convenience init(directory: String, metadataAttributes: Bool = true) throws(DiskCacheError) {
        let directory = CacheDirectory.normalized(directory)
        try CacheDirectory.prepare(directory)
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw DiskCacheError.system("cannot open cache directory", path: directory, kind: .directory) }
        self.init(normalized: directory, directoryFD: fd, metadataAttributes: metadataAttributes)
    }

    /// A store over a cache directory that is not there (`CacheDirectory.isAbsent`),
    /// for a run that only looks (`--offline`): it makes nothing, so a typo
    /// in `--cache-dir` leaves no folder behind, as with `cache path`. It
    /// has no directory open: every lookup misses (the URL is `empty`, not
    /// cached), and a write would fail with an `.io` error (EBADF).
    public convenience init(absentDirectory directory: String) {
        self.init(normalized: CacheDirectory.normalized(directory), directoryFD: -1, metadataAttributes: true)
    }

    private init(normalized directory: String, directoryFD: Int32, metadataAttributes: Bool) {
        self.directory = directory
        namePrefix = CacheDirectory.join(directory, "")
        temporaryDirectory = CacheDirectory.join(directory, CacheFileName.temporaryDirectory)
        self.directoryFD = directoryFD
        commitLock = CommitLock(directoryFD: directoryFD)
        placement = MetadataPlacement(forceSidecar: !metadataAttributes)
    }

    deinit { if directoryFD >= 0 { _ = close(directoryFD) } }

    /// `DIR/<key>` (`/<key>` in the root), built in one allocation.
    public func bodyPath(_ key: String) -> String { CacheEntry.bodyPath(directory: directory, key: key) }
    public func metadataPath(_ key: String) -> String { namePrefix + key + CacheFileName.metadataSuffix }

    /// The intact entry for `key` (32 lowercase hex digits), or nil: absent,
    /// unreadable, foreign, partial, a body that is not the one its metadata
    /// describes, or metadata for another key or another URL than `url`
    /// (`CacheKey.storedURL`, when the caller knows it). Never a crash.
    ///
    /// A hit costs one metadata read and one `stat` of the body, which also
    /// gives the last use (the body's atime): the record on the body, else
    /// (no record there) the sidecar.
    ///
    /// `accessTime` matters only for a sidecar-only entry (a remembered
    /// error in a sidecar directory), whose last use is its sidecar's atime:
    /// one more `stat` when asked for; without it `lastAccess` is 0 there.
    public func lookup(_ key: String, url: String? = nil, accessTime: Bool = true) -> CacheEntry? {
        guard let digest = MD5.Digest(hex: key) else { return nil }   // 32 lowercase hex digits only
        return lookup(validKey: digest, url: url, accessTime: accessTime, answerOnly: false)
    }

    /// `lookup` of a URL's key for its stored URL (`key.storedURL`). A
    /// `CacheKey`'s hex is a key by construction, so it is not checked again.
    ///
    /// With `answerOnly`, the record's body digest is not read (the entry's
    /// `bodyDigest` is empty; its headers are all there, read in place):
    /// for a lookup whose entry only answers (an `--offline` query: status,
    /// length, type, image facts, freshness), never revalidates, merges a
    /// 304, verifies or rewrites the record. Everything a hit checks (key,
    /// URL, completeness, the body's size and mtime) is checked as always.
    package func lookup(_ key: CacheKey, accessTime: Bool, answerOnly: Bool) -> CacheEntry? {
        lookup(validKey: key.digest, url: key.storedURL, accessTime: accessTime, answerOnly: answerOnly)
    }

    private func lookup(validKey digest: MD5.Digest, url: String?, accessTime: Bool, answerOnly: Bool) -> CacheEntry? {
        // The file's name is written on the stack: no key string per hit.
        digest.withHex { _, name in lookup(validKey: digest, name: name, url: url, accessTime: accessTime, answerOnly: answerOnly) }
    }

    /// `lookup`, `name` being the key's digits as a C string.
    private func lookup(validKey digest: MD5.Digest, name: UnsafePointer<CChar>, url: String?, accessTime: Bool,
                        answerOnly: Bool) -> CacheEntry? {
        if placement.readsRecords {
            // The record travels with the inode: it must name this key (a
            // body renamed to another key's name is not that key's entry),
            // and this URL when one is given (`readRecord` compares both).
            switch readRecord(name: name, key: digest, url: url, answerOnly: answerOnly) {
            case .record(let meta):
                guard let body = statBody(name: name), Self.body(body, matches: meta) else { return nil }
                return CacheEntry(key: digest, directory: directory, metadata: meta, lastAccess: seconds(body.st_atim),
                                  inode: UInt64(body.st_ino), recordOnBody: true)
            case .mismatch:
                return nil
            case .noFile where placement.mode(self) == .attribute:
                return nil   // no body, and this directory keeps no bodiless sidecars
            case .noFile, .invalid:
                break
            }
        }
        let key = digest.hex
        guard let meta = readMetadataForHit(key), meta.key == key, url.map({ meta.url == $0 }) ?? true else { return nil }
        var lastAccess = 0.0
        var inode: UInt64 = 0
        if meta.hasBody {
            guard let body = statBody(key), Self.body(body, matches: meta) else { return nil }
            lastAccess = seconds(body.st_atim)
            inode = UInt64(body.st_ino)
        } else if accessTime {
            lastAccess = metadataStatus(key).map { seconds($0.st_atim) } ?? 0
        }
        return CacheEntry(key: digest, directory: directory, metadata: meta, lastAccess: lastAccess, inode: inode, recordOnBody: false)
    }

    /// Starts writing a new body for `key`; nothing is visible until `commit`.
    public func makeWriter(for key: String) throws(DiskCacheError) -> CacheWriter {
        try CacheWriter(store: self, keyDigest: Self.digest(ofKey: key))
    }

    /// `makeWriter(for: key.hex)` without the hex: a key's digest needs no check, and its entry
    /// is named by the digest, written on the stack where it is linked (no string per download).
    package func makeWriter(for key: CacheKey) throws(DiskCacheError) -> CacheWriter {
        try CacheWriter(store: self, keyDigest: key.digest)
    }

    /// Records a bodiless entry (a remembered error status), replacing any
    /// entry of that key: an empty file carrying the record, or a sidecar.
    /// The URL is recorded as `CacheWriter.commit` records it.
    @discardableResult
    public func storeWithoutBody(_ metadata: CacheMetadata, key: String) throws(DiskCacheError) -> CacheEntry {
        try Self.validate(key)
        var meta = metadata
        meta.url = CacheKey.recordedURL(meta.url)
        meta.key = key
        meta.hasBody = false
        meta.bodyLength = 0
        meta.bodyDigest = ""
        meta.bodyInode = 0
        meta.bodyMtimeNs = 0
        meta.storedAt = currentUnixTime()
        if placement.mode(self) != .sidecar {
            var file = try createTemporaryFile(for: key)
            defer { file.discard() }
            meta.bodyMtimeNs = nanoseconds(try file.status().st_mtim)
            if let code = setRecord(fd: file.fd, meta) {
                guard code == ENOTSUP || Self.isTooLarge(code) else {
                    throw DiskCacheError.system("cannot record metadata for", path: bodyPath(key), errno: code)
                }
            } else {
                try publish(&file, key: key)
                return CacheEntry(key: key, directory: directory, metadata: meta, lastAccess: meta.storedAt,
                                  inode: UInt64(try file.status().st_ino), recordOnBody: true)
            }
        }
        meta.bodyMtimeNs = 0
        var file = try writeTemporaryMetadata(meta.encoded(), key: key)
        defer { file.discard() }
        try commitLock.withLock { () throws(DiskCacheError) in
            // The old body goes first: until the new metadata is in place, a
            // reader misses rather than hits the old entry.
            if unlink(bodyPath(key)) != 0 && errno != ENOENT {
                throw DiskCacheError.system("cannot remove", path: bodyPath(key))
            }
            try file.publish(as: metadataPath(key))
        }
        return CacheEntry(key: key, directory: directory, metadata: meta, lastAccess: meta.storedAt,
                          inode: 0, recordOnBody: false)
    }

    /// Replaces an entry's metadata, keeping its body (after a 304): in
    /// place, on the body's inode (one `fsetxattr` on the file the lookup
    /// found, checked again by inode, size and mtime once it is open: a body
    /// replaced meanwhile is never given another body's metadata). If
    /// another writer replaced the entry meanwhile, its complete entry is
    /// kept and returned instead (a newer copy of the same URL).
    /// (`consuming`: a 304's merged record is moved in, not copied.)
    @discardableResult
    public func updateMetadata(of entry: CacheEntry, to metadata: consuming CacheMetadata) throws(DiskCacheError) -> CacheEntry {
        var meta = metadata
        meta.storedKey = CacheMetadata.StoredHex.digest(entry.keyDigest)
        meta.hasBody = entry.metadata.hasBody
        meta.bodyLength = entry.metadata.bodyLength
        meta.storedDigest = entry.metadata.storedDigest   // as kept (no string made of a decoded one)
        meta.digestAlgorithm = entry.metadata.digestAlgorithm
        meta.bodyInode = entry.metadata.bodyInode
        meta.bodyMtimeNs = entry.metadata.bodyMtimeNs
        meta.storedAt = currentUnixTime()
        let updated: (lastAccess: Double, recordOnBody: Bool)?
        if entry.recordOnBody {
            updated = try updateRecord(of: entry, to: &meta)
        } else {
            updated = try updateSidecar(of: entry, to: meta)
        }
        guard let updated else {
            // Another writer replaced the entry meanwhile: its version stands, if it
            // is still of the same kind (a remembered error stored meanwhile has no body).
            guard let current = lookup(entry.key), current.metadata.hasBody == entry.metadata.hasBody else {
                throw DiskCacheError(.io, path: entry.bodyPath, message: "\(entry.bodyPath) was removed while it was being revalidated")
            }
            return current
        }
        var lastAccess = updated.lastAccess
        // A revalidation is a use (recorded on the body, or on a sidecar-only entry's sidecar).
        // (The name is made only when it is needed: a record on the body had its use noted already.)
        if meta.storedAt - lastAccess >= CacheDefaults.accessTimeResolution,
           setAccessTime(meta.hasBody || updated.recordOnBody ? entry.key : entry.key + CacheFileName.metadataSuffix) {
            lastAccess = meta.storedAt
        }
        return CacheEntry(key: entry.keyDigest, directory: entry.directory, metadata: meta, lastAccess: lastAccess,
                          inode: entry.inode, recordOnBody: updated.recordOnBody)
    }

    /// The 304 of an entry whose record is on its body. nil when the file at
    /// the body's name is no longer the entry's.
    private func updateRecord(of entry: CacheEntry, to meta: inout CacheMetadata) throws(DiskCacheError) -> (Double, Bool)? {
        // Named from the key's digits on the stack (a `String` of them cost ~600 instructions a 304).
        let fd = entry.keyDigest.withHex { _, name in
            openWithoutAccessTime(at: directoryFD, name, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        }
        guard fd >= 0 else {
            if errno == ENOENT || errno == ELOOP { return nil }
            throw DiskCacheError.system("cannot open", path: entry.bodyPath)
        }
        defer { _ = close(fd) }   // read-only descriptor: nothing to report
        var info = stat()
        guard fstat(fd, &info) == 0, UInt64(info.st_ino) == entry.inode, Self.body(info, matches: meta) else { return nil }
        guard let code = setRecord(fd: fd, meta) else {
            // A revalidation is a use: noted here on the open body, as `updateMetadata`
            // would by its name (one path walk less per 304).
            var lastAccess = seconds(info.st_atim)
            if meta.storedAt - lastAccess >= CacheDefaults.accessTimeResolution, Self.setAccessTime(fd: fd) {
                lastAccess = meta.storedAt
            }
            return (lastAccess, true)
        }
        guard Self.isTooLarge(code) else {
            throw DiskCacheError.system("cannot record metadata for", path: entry.bodyPath, errno: code)
        }
        // Too large for the attribute now: the record moves to a sidecar naming this inode.
        meta.bodyInode = entry.inode
        guard let moved = try updateSidecar(of: entry, to: meta) else { return nil }
        if cdisk_fremovexattr(fd, Self.metadataAttribute) != 0 && errno != ENODATA {
            throw DiskCacheError.system("cannot remove the old metadata of", path: entry.bodyPath)
        }
        return moved
    }

    /// The 304 of an entry kept in a sidecar: a new sidecar, renamed into
    /// place under the commit lock once the body is known to be the entry's.
    private func updateSidecar(of entry: CacheEntry, to meta: CacheMetadata) throws(DiskCacheError) -> (Double, Bool)? {
        var file = try writeTemporaryMetadata(meta.encoded(), key: entry.key)
        defer { file.discard() }
        var lastAccess = meta.storedAt
        let published = try commitLock.withLock { () throws(DiskCacheError) -> Bool in
            if meta.hasBody {
                guard let body = statBody(entry.key), Self.body(body, matches: meta) else { return false }
                lastAccess = seconds(body.st_atim)
            }
            try file.publish(as: metadataPath(entry.key))
            return true
        }
        return published ? (lastAccess, false) : nil
    }

    /// Notes a use of the entry for LRU pruning, cheaply: the atime of its
    /// access file (`CacheEntry.accessPath`) is set — one `utimensat`,
    /// content and mtime untouched — and only when the recorded use is older
    /// than `CacheDefaults.accessTimeResolution`. The cache's own reads never
    /// move it (metadata and `verify` read with `O_NOATIME` where allowed), so
    /// it works the same on `relatime`, `noatime` and tmpfs mounts; another
    /// program reading the body (an image viewer) counts as a use where the
    /// mount updates atimes.
    public func markAccessed(_ entry: CacheEntry, now: Double? = nil) {
        guard (now ?? currentUnixTime()) - entry.lastAccess >= CacheDefaults.accessTimeResolution else { return }
        if entry.hasFile {
            // The body's name on the stack: a fresh hit marks its use with no key string.
            _ = entry.keyDigest.withHex { _, name in setAccessTime(cName: name) }
        } else {
            _ = setAccessTime(entry.key + CacheFileName.metadataSuffix)
        }
    }

    /// Sets the entry's access time to now (its body's, or its sidecar's
    /// when it has no file). Returns false when that failed (absent, or a
    /// read-only cache): LRU order is advice, so nothing else happens.
    @discardableResult
    public func markAccessed(_ key: String) -> Bool {
        guard CacheFileName.isKey(key) else { return false }
        return setAccessTime(key) || (errno == ENOENT && setAccessTime(key + CacheFileName.metadataSuffix))
    }

    private func setAccessTime(_ name: String) -> Bool {
        // An explicit C string: passing a String where C wants `const char *`
        // copies it into a new array on every call.
        name.withCString { setAccessTime(cName: $0) }
    }

    private func setAccessTime(cName: UnsafePointer<CChar>) -> Bool {
        Self.withAccessTimeNow { utimensat(directoryFD, cName, $0, 0) == 0 }
    }

    /// `setAccessTime` on a file already open (same permission rules as by name).
    private static func setAccessTime(fd: Int32) -> Bool {
        withAccessTimeNow { futimens(fd, $0) == 0 }
    }

    /// `UTIME_NOW` and `UTIME_OMIT`, macros Swift does not import: a time set to
    /// now, or left as it is, by `utimensat`/`futimens`.
    static let utimeNow = (1 << 30) - 1, utimeOmit = (1 << 30) - 2

    /// Calls `set` with the times "atime now, mtime unchanged".
    private static func withAccessTimeNow(_ set: (UnsafePointer<timespec>) -> Bool) -> Bool {
        var times = (timespec(tv_sec: 0, tv_nsec: utimeNow), timespec(tv_sec: 0, tv_nsec: utimeOmit))
        return withUnsafePointer(to: &times) { pair in pair.withMemoryRebound(to: timespec.self, capacity: 2, set) }
    }

    /// Removes an entry (the body first, with the record on it, then any
    /// sidecar: a concurrent reader misses rather than mismatches). Returns
    /// whether there was anything to remove.
    @discardableResult
    public func remove(_ key: String) throws(DiskCacheError) -> Bool {
        try Self.validate(key)
        return try commitLock.withLock { () throws(DiskCacheError) -> Bool in
            try unlinkEntryFiles(key)
        }
    }

    /// Makes every entry written so far durable: one `syncfs` of the cache's
    /// file system (`--sync`), instead of an `fsync` per file.
    public func sync() throws(DiskCacheError) {
        guard cdisk_syncfs(directoryFD) == 0 else { throw DiskCacheError.system("cannot flush", path: directory) }
    }

    // MARK: - Internals shared with CacheWriter and the maintenance files

    /// Unlinks `<key>` then `<key>.meta` (regular files only: anything else
    /// with such a name is not the cache's); call with the commit lock held.
    /// A body with neither a sidecar nor a record attribute stays: the cache
    /// never leaves one (`CacheWriter`), so it is not the cache's own.
    func unlinkEntryFiles(_ key: String) throws(DiskCacheError) -> Bool {
        let sidecar = key + CacheFileName.metadataSuffix
        var removed = false
        if isRegularFile(sidecar) || !bodyLacksRecord(key), try unlinkRegular(key) { removed = true }
        if try unlinkRegular(sidecar) { removed = true }
        return removed
    }

    /// Whether `key`'s body is there without the cache's attribute (ENODATA,
    /// or ENOTSUP: a file system without attributes). An attribute that does
    /// not decode is still the cache's; a body that is gone, or a failure to
    /// tell, is not "without".
    func bodyLacksRecord(_ key: String) -> Bool {
        let count = key.withCString { name in
            directory.withCString { cDirectory in
                Self.metadataAttribute.withCString { cdisk_getxattrat(directoryFD, cDirectory, name, $0, nil, 0) }
            }
        }
        return count < 0 && (errno == ENODATA || errno == ENOTSUP)
    }

    private func isRegularFile(_ name: String) -> Bool {
        var info = stat()
        return fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Unlinks `name` in the cache directory if it is a regular file.
    func unlinkRegular(_ name: String) throws(DiskCacheError) -> Bool {
        var info = stat()
        guard fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        if unlinkat(directoryFD, name, 0) == 0 { return true }
        if errno == ENOENT { return false }
        throw DiskCacheError.system("cannot remove", path: namePrefix + name)
    }

    static func validate(_ key: String) throws(DiskCacheError) {
        guard CacheFileName.isKey(key) else { throw notAKey(key) }
    }

    /// `validate`, for a caller that needs the key's digest too: the same keys pass.
    static func digest(ofKey key: String) throws(DiskCacheError) -> MD5.Digest {
        guard let digest = MD5.Digest(hex: key) else { throw notAKey(key) }   // 32 lowercase hex digits only
        return digest
    }

    private static func notAKey(_ key: String) -> DiskCacheError {
        DiskCacheError(.invalidURL, path: "", message: "'\(key)' is not a cache key (32 lowercase hex digits)")
    }

    /// The file is the body the metadata describes: a regular file of the
    /// recorded size and mtime, and the recorded inode where one is recorded
    /// (a sidecar's).
    static func body(_ info: stat, matches meta: CacheMetadata) -> Bool {
        (info.st_mode & S_IFMT) == S_IFREG
            && Int64(info.st_size) == meta.bodyLength
            && (meta.bodyInode == 0 || UInt64(info.st_ino) == meta.bodyInode)
            && nanoseconds(info.st_mtim) == meta.bodyMtimeNs
    }

    func metadataStatus(_ key: String) -> stat? {
        var info = stat()
        guard fstatat(directoryFD, key + CacheFileName.metadataSuffix, &info, 0) == 0 else { return nil }
        return info
    }

    func statBody(_ key: String) -> stat? {
        key.withCString { statBody(name: $0) }
    }

    func statBody(name: UnsafePointer<CChar>) -> stat? {
        var info = stat()
        guard fstatat(directoryFD, name, &info, 0) == 0 else { return nil }
        return info
    }
}

func seconds(_ time: timespec) -> Double {
    Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
