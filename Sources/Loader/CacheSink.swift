import DiskCache
import Fetch

/// Feeds a transfer's body into a cache writer (temporary file + digest).
///
/// The writer is created on the first body byte, not before the request: a
/// 304, an error status or a failed connection never creates (and removes)
/// a temporary file.
///
/// Threading: the fetch engine calls `write`/`reset` from its loop thread or
/// from the awaiting task, never both at once, and only while `fetch` runs;
/// `received` and `abandon` are called by the awaiting task after it.
final class CacheSink: BodySink, @unchecked Sendable {
    private let cache: DiskCacheStore
    private let key: String
    private var writer: CacheWriter?
    private var spool: SpoolFile?

    init(cache: DiskCacheStore, key: String) {
        self.cache = cache
        self.key = key
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        switch try received() {
        case let writer as CacheWriter: try writer.append(bytes)
        case let spool as SpoolFile: try spool.write(bytes)
        default: break
        }
    }

    func reset() throws {
        try writer?.reset()
        try spool?.reset()
    }

    /// Where the body goes, created on first use (an empty 2xx body still
    /// gets one): a cache writer, or, when the cache cannot be written
    /// (an `io` error: a read-only directory, a full disk), a `SpoolFile`
    /// outside the cache, so the body can still be delivered.
    func received() throws(DiskCacheError) -> ReceivedBody {
        if let writer { return writer }
        if let spool { return spool }
        do {
            let created = try cache.makeWriter(for: key)
            writer = created
            return created
        } catch where error.kind == .io {
            let created = try SpoolFile(storeFailure: error.message)
            spool = created
            return created
        }
    }

    /// Removes the temporary file, if one was created and not committed.
    func abandon() {
        writer?.abandon()
        spool?.abandon()
    }
}
