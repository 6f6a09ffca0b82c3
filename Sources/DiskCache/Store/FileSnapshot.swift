#if canImport(Glibc)
import Glibc
#endif

/// The identity of an entry's two files (inode, size, mtime; zero when
/// absent), taken by maintenance before it decides and compared again under
/// the commit lock before it removes anything: an entry that a writer
/// replaced in between is left alone.
struct FileSnapshot: Equatable, Sendable {
    struct File: Equatable, Sendable {
        var inode: UInt64 = 0
        var size: Int64 = 0
        var mtimeNs: Int64 = 0
        /// A regular file: only those are the cache's (a directory or
        /// symlink with a cache-like name is foreign and never touched).
        var isRegular = false
        var exists = false
    }

    var metadata: File
    var body: File

    init(directoryFD: Int32, key: String) {
        metadata = Self.file(directoryFD, key + CacheFileName.metadataSuffix)
        body = Self.file(directoryFD, key)
    }

    /// Bytes the two files take (regular files only).
    var bytes: Int64 {
        (metadata.isRegular ? metadata.size : 0) + (body.isRegular ? body.size : 0)
    }

    private static func file(_ directoryFD: Int32, _ name: String) -> File {
        var info = stat()
        guard fstatat(directoryFD, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return File() }
        return File(inode: UInt64(info.st_ino), size: Int64(info.st_size), mtimeNs: nanoseconds(info.st_mtim),
                    isRegular: (info.st_mode & S_IFMT) == S_IFREG, exists: true)
    }
}
