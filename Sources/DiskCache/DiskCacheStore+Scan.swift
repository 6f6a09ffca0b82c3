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
        let snapshot: FileSnapshot
    }

    /// Everything of the cache's own in the directory (foreign files are
    /// not listed and not counted).
    public struct Scan: Sendable {
        /// Sorted by key.
        public var entries: [ScannedEntry] = []
        public var temporaryFiles = 0
        public var temporaryBytes: Int64 = 0

        public var intact: [CacheEntry] { entries.compactMap(\.entry) }
        public var broken: [ScannedEntry] { entries.filter { $0.entry == nil } }
        /// Bytes of every file the cache owns, temporary ones included.
        public var bytes: Int64 { entries.reduce(temporaryBytes) { $0 + $1.bytes } }
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
            let scanned = scanEntry(key)
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
        return scan
    }

    func scanEntry(_ key: String) -> ScannedEntry {
        let snapshot = FileSnapshot(directoryFD: directoryFD, key: key)
        var url: String?
        func broken(_ problem: String) -> ScannedEntry {
            ScannedEntry(key: key, entry: nil, problem: problem, url: url, bytes: snapshot.bytes, lastAccess: -.infinity,
                         snapshot: snapshot)
        }
        func intact(_ entry: CacheEntry) -> ScannedEntry {
            ScannedEntry(key: key, entry: entry, problem: nil, url: entry.metadata.url, bytes: snapshot.bytes,
                         lastAccess: entry.lastAccess, snapshot: snapshot)
        }
        /// The body's own copy of its metadata, when it describes that body
        /// and this key: what a hit would use where the metadata file does not
        /// (a kill between the renames of a commit).
        func byCopy(_ problem: String) -> ScannedEntry {
            guard snapshot.body.isRegular, let meta = readMetadataAttribute(key: key, bodyPath: bodyPath(key)),
                  let body = statBody(key), Self.body(body, matches: meta), MD5.hex(meta.url) == key
            else { return broken(problem) }
            return intact(CacheEntry(key: key, bodyPath: bodyPath(key), metadata: meta, lastAccess: seconds(body.st_atim)))
        }
        guard snapshot.metadata.isRegular else { return byCopy("a body without metadata") }
        guard let (meta, info) = readMetadata(key) else { return byCopy("metadata that is unreadable, partial or not ours") }
        url = meta.url
        var lastAccess = seconds(info.st_atim)
        if meta.hasBody {
            guard snapshot.body.isRegular else { return broken("metadata whose body is missing") }
            guard let body = statBody(key), Self.body(body, matches: meta) else {
                return byCopy("a body that is not the one its metadata describes")
            }
            // The body's atime; a cache written before uses were recorded there
            // has them on the metadata (whose atime also moves with each rewrite).
            lastAccess = max(seconds(body.st_atim), lastAccess)
        } else if snapshot.body.isRegular {
            return byCopy("a stray body beside a remembered error")
        }
        return intact(CacheEntry(key: key, bodyPath: bodyPath(key), metadata: meta, lastAccess: lastAccess))
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
}
