/// An intact entry: metadata whose body (if it has one) is the file at
/// `bodyPath`, checked by inode, size and mtime when it was looked up.
public struct CacheEntry: Sendable {
    public let key: String
    public let bodyPath: String
    public let metadata: CacheMetadata
    /// Last use (for LRU), Unix seconds: the atime of `accessPath`.
    public let lastAccess: Double

    /// `bodyPath` + ".meta" (built on demand: a hit does not need it).
    public var metadataPath: String { bodyPath + CacheFileName.metadataSuffix }

    /// The file whose atime records the last use: the body, or for a
    /// bodiless entry (a remembered 404) its metadata. See `DiskCacheStore.markAccessed`.
    public var accessPath: String { metadata.hasBody ? bodyPath : metadataPath }

    init(key: String, bodyPath: String, metadata: CacheMetadata, lastAccess: Double) {
        self.key = key
        self.bodyPath = bodyPath
        self.metadata = metadata
        self.lastAccess = lastAccess
    }
}
