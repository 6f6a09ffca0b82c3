#if canImport(Glibc)
import Glibc
#endif

/// Why the cache could not do something. One type for the module; the
/// message names the path and the system's reason.
public struct DiskCacheError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The cache directory cannot be resolved, created or written.
        case directory
        /// Reading or writing an entry failed (full disk, permissions, …).
        case io
        /// The URL cannot be turned into a cache key.
        case invalidURL = "invalid-url"
    }

    public let kind: Kind
    public let path: String
    public let message: String
    public let errno: Int32?

    public init(_ kind: Kind, path: String, message: String, errno code: Int32? = nil) {
        self.kind = kind
        self.path = path
        self.message = message
        self.errno = code
    }

    /// A failure of a system call on `path`, explained by `strerror`.
    static func system(_ operation: String, path: String, kind: Kind = .io, errno code: Int32 = Glibc.errno) -> DiskCacheError {
        DiskCacheError(kind, path: path, message: "\(operation) \(path): \(String(cString: strerror(code)))", errno: code)
    }

    public var description: String { message }
}
