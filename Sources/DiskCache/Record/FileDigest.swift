#if canImport(Glibc)
import Glibc
#endif

/// Rereads a stored body to check it against its metadata (`cache verify`).
enum FileDigest {
    struct Result {
        let length: Int64
        let digest: String
        /// The file that was read (it may differ from the name's current file).
        let inode: UInt64
        let mtimeNs: Int64
    }

    /// Streams the file at `path` through `algorithm` with a fixed buffer of
    /// `CacheDefaults.rehashReadBytes` (memory stays flat however large the body).
    static func digest(path: String, _ algorithm: DigestAlgorithm) throws(DiskCacheError) -> Result {
        let fd = path.withCString { openWithoutAccessTime(at: AT_FDCWD, $0, flags: O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { throw DiskCacheError.system("cannot read", path: path) }
        defer { _ = close(fd) }   // read-only: nothing to report
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw DiskCacheError.system("cannot stat", path: path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw DiskCacheError(.io, path: path, message: "\(path) is not a regular file")
        }
        let digest = try BodyHash(algorithm)
        var length: Int64 = 0
        try withUnsafeTemporaryAllocation(byteCount: CacheDefaults.rehashReadBytes, alignment: 16) { buffer throws(DiskCacheError) in
            guard let base = buffer.baseAddress else { return }
            while true {
                let n = read(fd, base, buffer.count)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw DiskCacheError.system("cannot read", path: path)
                }
                if n == 0 { return }
                digest.update(UnsafeRawBufferPointer(start: base, count: n))
                length += Int64(n)
            }
        }
        return Result(length: length, digest: digest.hex(), inode: UInt64(info.st_ino), mtimeNs: nanoseconds(info.st_mtim))
    }
}
