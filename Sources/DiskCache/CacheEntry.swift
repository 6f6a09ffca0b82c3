/// An intact entry: metadata whose body (if it has one) is the file at
/// `bodyPath`, checked by inode, size and mtime when it was looked up.
public struct CacheEntry: Sendable {
    public let key: String
    public let bodyPath: String
    public let metadataPath: String
    public let metadata: CacheMetadata
    /// Last access (for LRU), Unix seconds: the metadata file's atime.
    public let lastAccess: Double
}
