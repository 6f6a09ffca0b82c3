import DiskCache
import Fetch

/// Feeds a transfer's body into a cache writer (temporary file + digest)
/// and, unless any content may be stored, into the image structure check,
/// which so sees every byte once, as it is written (no second read).
///
/// The writer is created on the first body byte, not before the request: a
/// 304, an error status or a failed connection never creates (and removes)
/// a temporary file.
///
/// Threading: the fetch engine calls `write`/`reset` from its loop thread or
/// from the awaiting task, never both at once, and only while `fetch` runs;
/// `openedWriter` and `abandon` are called by the awaiting task after it.
final class CacheSink: BodySink, @unchecked Sendable {
    private let cache: DiskCacheStore
    private let key: String
    private var writer: CacheWriter?
    /// The body's structure so far; nil when it is not checked (`--any`).
    private(set) var structure: ImageStructure?

    init(cache: DiskCacheStore, key: String, checkStructure: Bool) {
        self.cache = cache
        self.key = key
        structure = checkStructure ? ImageStructure() : nil
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try openedWriter().append(bytes)
        structure?.feed(bytes)
    }

    func reset() throws {
        try writer?.reset()
        structure?.reset()
    }

    /// The writer, created on first use (an empty 2xx body still gets one).
    func openedWriter() throws(DiskCacheError) -> CacheWriter {
        if let writer { return writer }
        let created = try cache.makeWriter(for: key)
        writer = created
        return created
    }

    /// Removes the temporary file, if one was created and not committed.
    func abandon() { writer?.abandon() }
}
