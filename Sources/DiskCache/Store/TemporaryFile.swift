#if canImport(Glibc)
import Glibc
#endif
import CCrypto
import func Support.writeAll

/// A file being written for the cache, not yet published.
///
/// Where the file system has `O_TMPFILE` (ext4, xfs, btrfs, tmpfs), it has
/// no name at all: a writer killed at any instant leaves nothing behind. It
/// gets a name only when it is published (`publish`), for the instant between
/// `linkat` and the `rename` over the entry's name. Elsewhere it is created
/// as `DIR/.tmp/<key>.<pid>.<n>` (exclusively, mode 0600) and held under an
/// exclusive `flock` until it is closed: the sweep takes a file whose lock it
/// can get as the leftover of a dead writer.
///
/// Threading: one owner at a time.
///
/// A noncopyable struct, not a class: the writer of a download holds it
/// inline (an object made and freed per cold URL before). Its `deinit`
/// discards it, as the class's did; `discard` may come first, any number of times.
struct TemporaryFile: ~Copyable, Sendable {
    /// Its name in `DIR/.tmp`, once it has one.
    private(set) var path: String?
    private(set) var fd: Int32
    private var published = false
    /// The directory an unnamed file is in (for messages).
    private let directory: String

    /// An unnamed file in the directory `directoryFD` (`O_TMPFILE`), or nil
    /// when the file system has none (the caller then makes a named one).
    static func unnamed(in directoryFD: Int32, directory: String) throws(DiskCacheError) -> TemporaryFile? {
        let fd = cdisk_open_tmpfile(directoryFD, 0o600)
        if fd >= 0 { return .some(TemporaryFile(fd: fd, path: nil, directory: directory)) }
        switch errno {
        case EOPNOTSUPP, EISDIR, EINVAL, ENOENT: return nil
        default: throw DiskCacheError.system("cannot create a file in", path: directory)
        }
    }

    /// A new named file at `path` (exclusive, mode 0600), locked.
    init(path: String) throws(DiskCacheError) {
        // Open into a local first: a throwing init with every property set
        // still runs deinit, whose `discard()` would unlink a file of the same
        // name that belongs to someone else (the EEXIST case).
        let opened = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard opened >= 0 else { throw DiskCacheError.system("cannot create", path: path) }
        self.path = path
        fd = opened
        directory = ""
        // Best effort: where locks are unsupported, the sweep falls back to pid and age.
        var attempts = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0
                && (errno == EINTR || (errno == EWOULDBLOCK && attempts < CacheDefaults.temporaryLockTries)) {
            // A sweep holds it for an instant to look at it; it sees the file is fresh and lets go.
            if errno == EWOULDBLOCK { attempts += 1; usleep(CacheDefaults.temporaryLockPause) }
        }
    }

    /// An existing file at `path` in `.tmp` (a partial body this process
    /// has taken), opened to append to and locked like a new one.
    init(resuming path: String) throws(DiskCacheError) {
        let opened = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
        guard opened >= 0 else { throw DiskCacheError.system("cannot open", path: path) }
        _ = flock(opened, LOCK_EX | LOCK_NB)   // best effort, as for a new file: a fresh name nobody else holds
        guard lseek(opened, 0, SEEK_END) >= 0 else {
            // Before any property is set (a noncopyable struct is whole or not at all): what
            // `discard` does to a file that fails here, the error read first (errno).
            let error = DiskCacheError.system("cannot seek", path: path)
            _ = close(opened)
            _ = unlink(path)
            throw error
        }
        self.path = path
        fd = opened
        directory = ""
    }

    private init(fd: Int32, path: String?, directory: String) {
        self.fd = fd
        self.path = path
        self.directory = directory
    }

    deinit {
        // `discard`'s work (a deinit cannot call a mutating method).
        if fd >= 0 { _ = close(fd) }
        if !published, let path { _ = unlink(path) }
    }

    /// What error messages call the file.
    var displayPath: String { path ?? "a new entry in \(directory)" }

    /// Writes all of `bytes` (retrying short writes and EINTR).
    func write(_ bytes: UnsafeRawBufferPointer) throws(DiskCacheError) {
        guard fd >= 0 else { throw DiskCacheError(.io, path: displayPath, message: "write after close: \(displayPath)") }
        if let error = writeAll(fd, bytes) { throw DiskCacheError.system("cannot write", path: displayPath, errno: error) }
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the file).
    func read(at offset: Int64, count: Int) throws(DiskCacheError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, count - got, off_t(offset) + off_t(got)) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw DiskCacheError.system("cannot read", path: displayPath) }
            if n == 0 { break }
            got += n
        }
        return Array(bytes[0..<got])
    }

    /// The file's status (inode, size, mtime).
    func status() throws(DiskCacheError) -> stat {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw DiskCacheError.system("cannot stat", path: displayPath) }
        return info
    }

    /// Gives an unnamed file the name `name` (a fresh path in `.tmp`); a
    /// named one keeps its own. Returns the path the file now has.
    mutating func name(_ makeName: () -> String) throws(DiskCacheError) -> String {
        if let path { return path }
        let name = makeName()
        guard cdisk_link_tmpfile(fd, AT_FDCWD, name) == 0 else {
            throw DiskCacheError.system("cannot name the new entry", path: name)
        }
        path = name
        return name
    }

    /// Links an unnamed file to `name` in `directoryFD` (`path` for
    /// messages) if nothing has that name: true when it is now published
    /// there. False for a named file, or when the name is taken (EEXIST).
    mutating func linkIfAbsent(directoryFD: Int32, name: UnsafePointer<CChar>, path: @autoclosure () -> String) throws(DiskCacheError) -> Bool {
        guard self.path == nil else { return false }
        if cdisk_link_tmpfile(fd, directoryFD, name) == 0 {
            published = true
            return true
        }
        // errno read before `path()` runs: building the path allocates, which may set errno.
        let code = errno
        guard code == EEXIST else { throw DiskCacheError.system("cannot publish", path: path(), errno: code) }
        return false
    }

    /// Renames the (named) file onto `destination` (atomic; replaces what is
    /// there). The descriptor stays open, keeping any lock until `close`.
    mutating func publish(as destination: String) throws(DiskCacheError) {
        guard let path else { throw DiskCacheError(.io, path: destination, message: "cannot publish an unnamed file") }
        guard rename(path, destination) == 0 else {
            throw DiskCacheError.system("cannot rename into", path: destination)
        }
        published = true
    }

    /// The file's name now belongs to someone else (who removes it): `discard` leaves it.
    mutating func markPublished() { published = true }

    /// Closes the file, deleting its name unless it was published (an
    /// unnamed file vanishes with its descriptor). Safe to call more than once.
    mutating func discard() {
        if fd >= 0 {
            _ = close(fd)   // nothing to report: the data is published or thrown away
            fd = -1
        }
        if !published {
            published = true
            if let path { _ = unlink(path) }   // ENOENT when a sweep took it; nothing else can fail usefully here
        }
    }

    func truncate(to length: Int64 = 0) throws(DiskCacheError) {
        guard fd >= 0, ftruncate(fd, off_t(length)) == 0, lseek(fd, off_t(length), SEEK_SET) == off_t(length) else {
            throw DiskCacheError.system("cannot truncate", path: displayPath)
        }
    }
}
