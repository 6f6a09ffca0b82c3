#if canImport(Glibc)
import Glibc
#endif
import CCrypto

/// A body cut off mid-transfer, kept to be resumed (SPEC §5, Resume): the
/// bytes received so far at `DIR/.partial/<md5>`, with a record (the same
/// extended attribute as an entry's) naming the URL, the validators and the
/// length kept. The next run asks for the rest with `Range` and `If-Range`;
/// the completed body is hashed whole and checked like any other before it
/// is published. Kept only where records are (a file system with user
/// extended attributes); `cache clear` removes them.
public struct PartialBody: Sendable {
    public let key: String
    public let path: String
    /// URL, status, response headers; `bodyLength` is the length kept.
    public let metadata: CacheMetadata
    public var length: Int64 { metadata.bodyLength }

    /// What `If-Range` sends (RFC 9110 §13.1.5): a strong ETag, else the
    /// Last-Modified date; nil when there is neither (nothing to resume).
    public var validator: String? {
        if let etag = metadata.header("ETag"), !etag.hasPrefix("W/") { return etag }
        return metadata.header("Last-Modified")
    }
}

extension DiskCacheStore {
    static let partialFolder = ".partial"
    var partialDirectory: String { CacheDirectory.join(directory, Self.partialFolder) }

    /// The kept partial body of `key` for `url` (`CacheKey.storedURL`), or
    /// nil: none, another URL's, or a file whose size is not the recorded one.
    /// The folder of kept parts is looked for once per store: parts kept
    /// after that are for later runs.
    /// `url` is asked for only when a part is found (most loads have none: no scan of the URL).
    public func partial(for key: String, url: @autoclosure () -> String) -> PartialBody? {
        guard placement.readsRecords, hasPartialFolder, CacheFileName.isKey(key) else { return nil }   // no partial folder (the usual case): no key check either
        let name = Self.partialFolder + "/" + key
        let path = partialDirectory + "/" + key
        let meta = withUnsafeTemporaryAllocation(byteCount: CacheDefaults.maxRecordAttributeSize, alignment: 1) { buffer -> CacheMetadata? in
            guard let base = buffer.baseAddress else { return nil }
            let count = cdisk_getxattrat(directoryFD, directory, name, Self.metadataAttribute, base, buffer.count)
            guard count > 0 else { return nil }
            return CacheMetadata.decode(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count]))
        }
        var info = stat()
        guard let meta, meta.key == key, meta.url == url(), fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0,
              (info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_size) == meta.bodyLength else { return nil }
        return PartialBody(key: key, path: path, metadata: meta)
    }

    /// `partial(for: key.hex, url: key.storedURL)`, asked only where partial bodies may be (a
    /// folder of them exists): a cold URL makes neither string here (the loader's).
    package func partial(for key: CacheKey) -> PartialBody? {
        guard placement.readsRecords, hasPartialFolder else { return nil }
        return partial(for: key.hex, url: key.storedURL)
    }

    private var hasPartialFolder: Bool {
        var state = partialFolderState.load(ordering: .relaxed)
        if state == 0 {
            var info = stat()
            state = fstatat(directoryFD, Self.partialFolder, &info, 0) == 0 ? 1 : 2
            partialFolderState.store(state, ordering: .relaxed)
        }
        return state == 1
    }

    /// A writer that continues `partial`: its bytes are hashed (read once)
    /// and the rest is appended. Committing publishes the whole body.
    public func makeWriter(for key: String, resuming partial: PartialBody) throws(DiskCacheError) -> CacheWriter {
        try CacheWriter(store: self, keyDigest: Self.digest(ofKey: key), resuming: partial)
    }

    /// Removes `key`'s partial body, if any (a 200 replaced it, it was
    /// completed, or `cache rm` forgets the URL); returns whether one was
    /// there to remove.
    @discardableResult
    public func removePartial(_ key: String) -> Bool {
        guard CacheFileName.isKey(key) else { return false }
        return unlinkat(directoryFD, Self.partialFolder + "/" + key, 0) == 0   // ENOENT: nothing kept; nothing else to report
    }

    /// Removes the partial body `scanned` saw, if it is still that file (a
    /// run resuming it renames it away first); returns whether it did.
    func removePartial(_ scanned: ScannedPartial) -> Bool {
        let name = Self.partialFolder + "/" + scanned.key
        var info = stat()
        guard fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0, UInt64(info.st_ino) == scanned.inode,
              Int64(info.st_size) == scanned.bytes else { return false }
        return unlinkat(directoryFD, name, 0) == 0
    }

    /// Removes every partial body (`cache clear`); returns how many. A
    /// folder that cannot be listed is an error (none at all: nothing to remove).
    func removeAllPartials() throws(DiskCacheError) -> Int {
        guard let names = try DirectoryListing.names(in: partialDirectory) else { return 0 }
        var removed = 0
        for name in names where CacheFileName.isKey(name) {
            if unlinkat(directoryFD, Self.partialFolder + "/" + name, 0) == 0 { removed += 1 }
        }
        return removed
    }

    /// Takes `partial` for this writer alone: it is renamed into `.tmp`
    /// (atomic: of two processes resuming one URL, one gets it, the other
    /// downloads afresh) and opened there.
    func takePartial(_ partial: PartialBody) throws(DiskCacheError) -> TemporaryFile {
        var attempt = 0
        while true {
            attempt += 1
            let taken = makeTemporaryName(for: partial.key)
            if rename(partial.path, taken) == 0 {
                var file = try TemporaryFile(resuming: taken)
                // An fstat failure throws; `file` is then discarded by its deinit.
                guard try Int64(file.status().st_size) == partial.length else {
                    file.discard()
                    throw DiskCacheError(.io, path: partial.path, message: "\(partial.path) changed before it could be resumed")
                }
                return file
            }
            if errno == ENOENT && attempt == 1 {
                var info = stat()
                if stat(temporaryDirectory, &info) != 0 { try ensureTemporaryDirectory(); continue }
            }
            throw DiskCacheError.system("cannot resume", path: partial.path)
        }
    }

    /// Publishes `file` (complete up to now, its record set) as `key`'s
    /// partial body, replacing an older one.
    func publishPartial(_ file: inout TemporaryFile, key: String) throws(DiskCacheError) {
        let destination = partialDirectory + "/" + key
        if file.path == destination { return }   // a resumed partial, grown in place
        if mkdir(partialDirectory, 0o700) != 0 && errno != EEXIST {
            throw DiskCacheError.system("cannot create", path: partialDirectory)
        }
        _ = try name(&file, key: key)
        try file.publish(as: destination)
    }
}
