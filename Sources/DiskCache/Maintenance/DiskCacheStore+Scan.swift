#if canImport(Glibc)
import Glibc
#endif

extension DiskCacheStore {
    /// One key found in the directory: an intact entry, or files that are
    /// not one (and why).
    public struct ScannedEntry: Sendable {
        public let key: String
        /// The intact entry, or nil when `problem` says why there is none.
        public let entry: CacheEntry?
        public let problem: String?
        /// The URL its metadata names, when the metadata could be read.
        public let url: String?
        /// Bytes on disk of the body and metadata files.
        public let bytes: Int64
        /// Last use, Unix seconds (`CacheEntry.lastAccess`); `-infinity` for
        /// a broken entry, which pruning removes first.
        public let lastAccess: Double
        /// An intact entry whose record is on its body, beside an outdated
        /// sidecar (left by an older version or an earlier oversized record),
        /// which `verify` removes.
        public let straySidecar: Bool
        /// Why the entry's files could not be read (`Permission denied`), or
        /// nil: such an entry cannot be judged, so `verify` reports it and
        /// leaves it alone (`problem` says the same).
        public let unreadable: String?
        let snapshot: FileSnapshot
    }

    /// A kept partial body (`.partial/<md5>`): a cut-off download waiting to be resumed.
    public struct ScannedPartial: Sendable {
        public let key: String
        public let bytes: Int64
        /// Its last write, Unix seconds: its last use, for pruning.
        public let lastWrite: Double
        let inode: UInt64
    }

    /// Everything of the cache's own in the directory (foreign files are
    /// not listed and not counted).
    public struct Scan: Sendable {
        /// Sorted by key.
        public var entries: [ScannedEntry] = []
        /// Paths of regular files named like a key that carry no metadata
        /// (no sidecar, no record attribute): the cache never leaves one
        /// (`CacheWriter`), so they are not its own, and nothing removes or
        /// counts them; `verify` names them.
        public var unowned: [String] = []
        public var temporaryFiles = 0
        public var temporaryBytes: Int64 = 0
        /// Kept partial bodies, by key.
        public var partials: [ScannedPartial] = []

        public var intact: [CacheEntry] { entries.compactMap(\.entry) }
        public var broken: [ScannedEntry] { entries.filter { $0.entry == nil } }
        public var partialBytes: Int64 { partials.reduce(0) { $0 + $1.bytes } }
        /// Bytes of every file the cache owns, temporary files and kept partial bodies included.
        public var bytes: Int64 { entries.reduce(temporaryBytes + partialBytes) { $0 + $1.bytes } }

        /// Nothing: what a cache directory that does not exist holds.
        public init() {}
    }

    /// Looks at every body, metadata and temporary file the cache owns.
    /// Reads metadata without moving access times. Throws only when the
    /// directory itself cannot be listed.
    public func scan() throws(DiskCacheError) -> Scan {
        var scan = Scan()
        var keys = Set<String>()
        for name in try DirectoryListing.names(in: directory) ?? [] {
            switch CacheFileName(name) {
            case .body(let key)?, .metadata(let key)?: keys.insert(key)
            case nil: continue
            }
        }
        for key in keys.sorted() {
            guard let scanned = scanEntry(key) else {
                scan.unowned.append(bodyPath(key))
                continue
            }
            // Only regular files are the cache's: a directory, symlink or FIFO
            // with a cache-like name (and nothing else under that key) is foreign.
            guard scanned.snapshot.metadata.isRegular || scanned.snapshot.body.isRegular else { continue }
            scan.entries.append(scanned)
        }
        for name in try DirectoryListing.names(in: temporaryDirectory) ?? [] where TemporaryFileName(name) != nil {
            var info = stat()
            guard lstat(temporaryDirectory + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            scan.temporaryFiles += 1
            scan.temporaryBytes += Int64(info.st_size)
        }
        for name in try DirectoryListing.names(in: partialDirectory) ?? [] where CacheFileName.isKey(name) {
            var info = stat()
            guard fstatat(directoryFD, Self.partialFolder + "/" + name, &info, AT_SYMLINK_NOFOLLOW) == 0,
                  (info.st_mode & S_IFMT) == S_IFREG else { continue }
            scan.partials.append(ScannedPartial(key: name, bytes: Int64(info.st_size), lastWrite: seconds(info.st_mtim),
                                                inode: UInt64(info.st_ino)))
        }
        scan.partials.sort { $0.key < $1.key }
        return scan
    }

    /// Why `key`'s entry is broken, in `cache list`'s words ("a body that is
    /// not the one its metadata describes"), or nil when it is intact, absent
    /// or not the cache's: what an `--offline` miss says of a URL `cache
    /// list` shows. Only for a lookup that missed (two `fstatat` when nothing is there).
    package func brokenProblem(_ key: CacheKey) -> String? {
        let hex = key.hex
        guard let scanned = scanEntry(hex), scanned.entry == nil,
              scanned.snapshot.metadata.isRegular || scanned.snapshot.body.isRegular else { return nil }
        return scanned.problem
    }

    /// nil: a body without any metadata, not the cache's own (`Scan.unowned`).
    func scanEntry(_ key: String) -> ScannedEntry? {
        let snapshot = FileSnapshot(directoryFD: directoryFD, key: key)
        var url: String?
        func broken(_ problem: String) -> ScannedEntry {
            if url == nil, let denied = unreadable(key, snapshot: snapshot) {
                return ScannedEntry(key: key, entry: nil, problem: "unreadable (\(denied))", url: nil, bytes: snapshot.bytes,
                                    lastAccess: -.infinity, straySidecar: false, unreadable: denied, snapshot: snapshot)
            }
            return ScannedEntry(key: key, entry: nil, problem: problem, url: url, bytes: snapshot.bytes, lastAccess: -.infinity,
                                straySidecar: false, unreadable: nil, snapshot: snapshot)
        }
        func intact(_ entry: CacheEntry, stray: Bool = false) -> ScannedEntry {
            ScannedEntry(key: key, entry: entry, problem: nil, url: entry.metadata.url, bytes: snapshot.bytes,
                         lastAccess: entry.lastAccess, straySidecar: stray, unreadable: nil, snapshot: snapshot)
        }
        if snapshot.body.isRegular && placement.readsRecords,
           case .record(let meta) = readRecord(key: key) {
            url = meta.url
            guard meta.key == key else { return broken("metadata for another key (\(meta.url))") }
            guard let body = statBody(key), Self.body(body, matches: meta) else {
                return broken("a body that is not the one its metadata describes")
            }
            let entry = CacheEntry(key: key, directory: directory, metadata: meta, lastAccess: seconds(body.st_atim),
                                   inode: UInt64(body.st_ino), recordOnBody: true)
            return intact(entry, stray: snapshot.metadata.isRegular)
        }
        guard snapshot.metadata.isRegular else {
            // No record of ours at all: not the cache's (nil). A record that does not decode: a broken entry.
            if snapshot.body.isRegular && bodyLacksRecord(key) { return nil }
            return broken("a body whose metadata is unreadable, partial or not ours")
        }
        guard let (meta, info) = readMetadata(key) else { return broken("metadata that is unreadable, partial or not ours") }
        url = meta.url
        guard meta.key == key else { return broken("metadata for another key (\(meta.url))") }
        var lastAccess = seconds(info.st_atim)
        var inode: UInt64 = 0
        if meta.hasBody {
            guard snapshot.body.isRegular else { return broken("metadata whose body is missing") }
            guard let body = statBody(key), Self.body(body, matches: meta) else {
                return broken("a body that is not the one its metadata describes")
            }
            // The body's atime; a cache written before uses were recorded there
            // has them on the metadata (whose atime also moves with each rewrite).
            lastAccess = max(seconds(body.st_atim), lastAccess)
            inode = UInt64(body.st_ino)
        } else if snapshot.body.isRegular {
            return broken("a stray body beside a remembered error")
        }
        return intact(CacheEntry(key: key, directory: directory, metadata: meta, lastAccess: lastAccess,
                                 inode: inode, recordOnBody: false))
    }

    /// Why this process may not read `key`'s body or sidecar (`strerror` of
    /// EACCES or EPERM: a mode-000 file, another user's), or nil. A record
    /// that cannot be read says nothing about the entry: it is not broken.
    func unreadable(_ key: String, snapshot: FileSnapshot) -> String? {
        for (name, present) in [(key, snapshot.body.isRegular), (key + ".meta", snapshot.metadata.isRegular)] where present {
            let fd = openat(directoryFD, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            if fd >= 0 {
                close(fd)
                continue
            }
            let code = errno
            if code == EACCES || code == EPERM { return String(cString: strerror(code)) }
        }
        return nil
    }

    /// Removes the entry's files under the commit lock, but only if they are
    /// still the files `snapshot` saw (a writer may have replaced them since).
    /// Returns whether anything was removed.
    func remove(_ key: String, ifUnchangedSince snapshot: FileSnapshot) throws(DiskCacheError) -> Bool {
        try commitLock.withLock { () throws(DiskCacheError) -> Bool in
            guard FileSnapshot(directoryFD: directoryFD, key: key) == snapshot else { return false }
            return try unlinkEntryFiles(key)
        }
    }

    /// Removes an outdated sidecar beside an entry whose record is on its
    /// body, under the commit lock, if it is still the file `snapshot` saw.
    func removeStraySidecar(_ key: String, snapshot: FileSnapshot) throws(DiskCacheError) -> Bool {
        try commitLock.withLock { () throws(DiskCacheError) -> Bool in
            guard FileSnapshot(directoryFD: directoryFD, key: key).metadata == snapshot.metadata else { return false }
            return try unlinkRegular(key + CacheFileName.metadataSuffix)
        }
    }
}
