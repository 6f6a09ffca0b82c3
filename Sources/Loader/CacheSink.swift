import DiskCache
import Fetch

/// Feeds a transfer's body into a cache writer (temporary file + digest).
/// Called only from the fetch loop thread while the transfer runs.
final class CacheSink: BodySink, @unchecked Sendable {
    let writer: CacheWriter

    init(_ writer: CacheWriter) { self.writer = writer }

    func write(_ bytes: UnsafeRawBufferPointer) throws { try writer.append(bytes) }
    func reset() throws { try writer.reset() }
}
