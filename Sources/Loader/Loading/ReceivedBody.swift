import DiskCache

/// What the loader reads back from a body it has just received: its first
/// bytes (to sniff), its length, a range of it (the tail), and a name to
/// keep it under until it is delivered, when it is not stored.
protocol ReceivedBody: AnyObject {
    var head: [UInt8] { get }
    var bytesWritten: Int64 { get }
    /// A name the decoder (`--decode`) opens the body by, read-only.
    var readablePath: String { get }
    func read(at offset: Int64, count: Int) throws(DiskCacheError) -> [UInt8]
    func keepUnstored() throws(DiskCacheError) -> String
}

extension CacheWriter: ReceivedBody {}
