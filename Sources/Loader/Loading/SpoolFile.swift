import DiskCache
import Fetch
#if canImport(Glibc)
import Glibc
#endif

/// A body received while the cache cannot be written (a read-only cache
/// directory, a full disk): it goes to a temporary file outside the cache (`$TMPDIR`,
/// else `/tmp`), so that `-o` and `--output-dir` still get it. The loader
/// links it to a `TransientBody` (removed once delivered); `CacheSink`
/// removes this name when the load ends.
final class SpoolFile: ReceivedBody, @unchecked Sendable {
    private let sink: FileSink
    /// Why the cache could not take the body (the cache's own error).
    let storeFailure: String
    private(set) var head: [UInt8] = []
    var bytesWritten: Int64 { sink.bytesWritten }
    var readablePath: String { sink.path }

    init(storeFailure: String) throws(DiskCacheError) {
        self.storeFailure = storeFailure
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let path = "\(directory)/asyncfetch-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).part"
        do {
            sink = try FileSink(path: path)
        } catch {
            throw Self.failure(error, path: path, storeFailure: storeFailure)
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        if head.count < CacheDefaults.headLimit {
            head.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(CacheDefaults.headLimit - head.count)))
        }
        do { try sink.write(bytes) } catch { throw Self.failure(error, path: sink.path, storeFailure: storeFailure) }
    }

    /// The spool failing too: both reasons, the cache's first (it is what the user must fix).
    private static func failure(_ error: any Error, path: String, storeFailure: String) -> DiskCacheError {
        DiskCacheError(.io, path: path, message: "\(storeFailure); and \((error as? FetchError)?.detail ?? "\(error)")")
    }

    func reset() throws {
        head.removeAll()
        try sink.reset()
    }

    func read(at offset: Int64, count: Int) throws(DiskCacheError) -> [UInt8] {
        let fd = open(sink.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DiskCacheError.io("cannot read", path: sink.path) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, count - got, off_t(offset) + off_t(got)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw DiskCacheError.io("cannot read", path: sink.path) }
            got += n
        }
        return bytes
    }

    /// A second name for the file, which outlives `abandon()` (which removes the first).
    func keepUnstored() throws(DiskCacheError) -> String {
        let kept = sink.path + ".deliver"
        guard link(sink.path, kept) == 0 else { throw DiskCacheError.io("cannot link", path: kept) }
        return kept
    }

    func abandon() { sink.remove() }
}
