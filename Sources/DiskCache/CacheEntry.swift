/// An intact entry: metadata whose body (if it has one) is the file at
/// `bodyPath`, checked by inode, size and mtime when it was looked up.
public struct CacheEntry: Sendable {
    public let key: String
    public let bodyPath: String
    public let metadata: CacheMetadata
    /// Last use (for LRU), Unix seconds: the metadata file's atime.
    public let lastAccess: Double

    /// `bodyPath` + ".meta" (built on demand: a hit does not need it).
    public var metadataPath: String { bodyPath + CacheFileName.metadataSuffix }

    init(key: String, bodyPath: String, metadata: CacheMetadata, lastAccess: Double) {
        self.key = key
        self.bodyPath = bodyPath
        self.metadata = metadata
        self.lastAccess = lastAccess
    }
}
