import func Support.withUTF8Bytes

/// An intact entry: metadata whose body (if it has one) is the file at
/// `bodyPath`, checked by size and mtime (and inode, for a sidecar) when it
/// was looked up.
public struct CacheEntry: Sendable {
    /// The entry's key: 32 lowercase hex digits, its file name.
    public var key: String { keyDigest.hex }
    /// The key as its 16 bytes: what a lookup holds (no string per hit).
    public let keyDigest: MD5.Digest
    /// The cache directory the entry is in (`DiskCacheStore.directory`).
    public let directory: String
    public let metadata: CacheMetadata
    /// Last use (for LRU), Unix seconds: the atime of `accessPath`.
    public let lastAccess: Double
    /// The inode of the file at `bodyPath` when it was looked up (0 when
    /// there is none: a remembered error kept only in a sidecar).
    public let inode: UInt64
    /// Whether the metadata lives on the body's inode (the extended
    /// attribute) rather than in a sidecar `<md5>.meta`.
    public let recordOnBody: Bool

    /// `directory/key`, the body's path (`/key` in the root). Built on demand, in one allocation:
    /// a hit does not need it (its result line writes the two pieces).
    public var bodyPath: String { keyDigest.withHex { digits, _ in Self.bodyPath(directory: directory, name: digits) } }

    /// `bodyPath` + ".meta" (built on demand: a hit does not need it).
    public var metadataPath: String { bodyPath + CacheFileName.metadataSuffix }

    /// The file whose atime records the last use: the body (also the empty
    /// file that carries a remembered error's record), or a sidecar-only
    /// entry's metadata. See `DiskCacheStore.markAccessed`.
    public var accessPath: String { hasFile ? bodyPath : metadataPath }

    /// Whether there is a file at `bodyPath` that belongs to the entry.
    var hasFile: Bool { metadata.hasBody || recordOnBody }

    /// `directory/key` (`/key` in the root: no `//`), built in one allocation.
    package static func bodyPath(directory: String, key: String) -> String {
        withUTF8Bytes(of: key) { bodyPath(directory: directory, name: $0) }
    }

    /// `directory/name`, `name` given as its bytes.
    package static func bodyPath(directory: String, name: UnsafeBufferPointer<UInt8>) -> String {
        withUTF8Bytes(of: directory) { dir in
            let slash = dir.last == 0x2F ? 0 : 1
            return String(unsafeUninitializedCapacity: dir.count + slash + name.count) { out in
                _ = out.initialize(fromContentsOf: dir)
                if slash == 1 { out[dir.count] = 0x2F }
                _ = out[(dir.count + slash)...].initialize(fromContentsOf: name)
                return dir.count + slash + name.count
            }
        }
    }

    /// Whether `bodyPath` puts a `/` between `directory` and the key (not
    /// after the root's own).
    package static func needsSeparator(after directory: String) -> Bool { directory.utf8.last != 0x2F }

    /// `key` is a checked key (32 lowercase hex digits: `CacheFileName.isKey`).
    init(key: String, directory: String, metadata: CacheMetadata, lastAccess: Double, inode: UInt64, recordOnBody: Bool) {
        guard let digest = MD5.Digest(hex: key) else { preconditionFailure("'\(key)' is not a cache key") }
        self.init(key: digest, directory: directory, metadata: metadata, lastAccess: lastAccess, inode: inode,
                  recordOnBody: recordOnBody)
    }

    init(key: MD5.Digest, directory: String, metadata: CacheMetadata, lastAccess: Double, inode: UInt64, recordOnBody: Bool) {
        keyDigest = key
        self.directory = directory
        self.metadata = metadata
        self.lastAccess = lastAccess
        self.inode = inode
        self.recordOnBody = recordOnBody
    }
}
