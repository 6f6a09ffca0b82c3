#if canImport(Glibc)
import Glibc
#endif

/// A file being written in `DIR/.tmp`, created exclusively with mode 0600
/// and held under an exclusive `flock` until it is closed: the sweep takes a
/// file whose lock it can get as the leftover of a dead writer.
///
/// Threading: one owner at a time.
final class TemporaryFile: @unchecked Sendable {
    let path: String
    private(set) var fd: Int32
    private var published = false

    init(path: String) throws(DiskCacheError) {
        // Open into a local first: a throwing init with every property set
        // still runs deinit, whose `discard()` would unlink a file of the same
        // name that belongs to someone else (the EEXIST case).
        // Readable too: a body's digest is partly computed by reading it back (`BodyDigest`).
        let opened = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard opened >= 0 else { throw DiskCacheError.system("cannot create", path: path) }
        self.path = path
        fd = opened
        // Best effort: where locks are unsupported, the sweep falls back to pid and age.
        var attempts = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 && (errno == EINTR || (errno == EWOULDBLOCK && attempts < 100)) {
            // A sweep holds it for an instant to look at it; it sees the file is fresh and lets go.
            if errno == EWOULDBLOCK { attempts += 1; usleep(100) }
        }
    }

    deinit { discard() }

    /// Writes all of `bytes` (retrying short writes and EINTR).
    func write(_ bytes: UnsafeRawBufferPointer) throws(DiskCacheError) {
        guard fd >= 0 else { throw DiskCacheError(.io, path: path, message: "write after close: \(path)") }
        guard var base = bytes.baseAddress else { return }
        var left = bytes.count
        while left > 0 {
            let n = Glibc.write(fd, base, left)
            if n < 0 {
                if errno == EINTR { continue }
                throw DiskCacheError.system("cannot write", path: path)
            }
            left -= n
            base += n
        }
    }

    /// The file's status (inode, size, mtime).
    func status() throws(DiskCacheError) -> stat {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw DiskCacheError.system("cannot stat", path: path) }
        return info
    }

    /// `fsync`s the file (contents and metadata).
    func syncData() throws(DiskCacheError) {
        guard fd >= 0, fsync(fd) == 0 else { throw DiskCacheError.system("cannot write", path: path) }
    }

    /// Renames the file onto `destination` (atomic; replaces what is there).
    /// The descriptor stays open, keeping the lock until `close`.
    func publish(as destination: String) throws(DiskCacheError) {
        guard rename(path, destination) == 0 else {
            throw DiskCacheError.system("cannot rename into", path: destination)
        }
        published = true
    }

    /// Closes the file, deleting it unless it was published. Safe to call more than once.
    func discard() {
        if fd >= 0 {
            _ = close(fd)   // nothing to report: the data is synced or thrown away
            fd = -1
        }
        if !published {
            published = true
            _ = unlink(path)   // ENOENT when a sweep took it; nothing else can fail usefully here
        }
    }

    func truncate() throws(DiskCacheError) {
        guard fd >= 0, ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            throw DiskCacheError.system("cannot truncate", path: path)
        }
    }
}
