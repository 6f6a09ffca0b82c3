#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import func Support.writeAll
import func Support.bestEffort

/// A sink that writes to a file, created exclusively with mode 0600.
/// The owner decides what happens to the file afterwards (`close`, `remove`).
public final class FileSink: BodySink, @unchecked Sendable {
    public let path: String
    private var fd: Int32
    public private(set) var bytesWritten: Int64 = 0

    public init(path: String) throws {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0 { throw FetchError.io(path: path, operation: "create", errno: errno) }
    }

    deinit { if fd >= 0 { _ = Glibc.close(fd) } }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        if let error = writeAll(fd, bytes) { throw FetchError.io(path: path, operation: "write", errno: error) }
        bytesWritten += Int64(bytes.count)
    }

    public func reset() throws {
        if ftruncate(fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0 {
            throw FetchError.io(path: path, operation: "truncate", errno: errno)
        }
        bytesWritten = 0
    }

    /// Closes the file; further writes fail.
    public func close() throws {
        guard fd >= 0 else { return }
        let rc = Glibc.close(fd)
        fd = -1
        if rc != 0 { throw FetchError.io(path: path, operation: "close", errno: errno) }
    }

    /// Closes and deletes the file (after a failure or cancellation).
    public func remove() {
        bestEffort("none: the file is deleted next, and what it held with it") { try close() }
        unlink(path)   // ENOENT when it is gone already; nothing else to report of a file thrown away
    }
}

extension FetchError {
    /// An I/O failure on `path`, with the system's explanation.
    public static func io(path: String, operation: String, errno code: Int32, url: String = "") -> FetchError {
        FetchError(.io, url: url, detail: "\(operation) \(path): \(String(cString: strerror(code)))")
    }
}
