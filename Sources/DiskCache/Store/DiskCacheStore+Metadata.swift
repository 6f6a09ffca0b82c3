#if canImport(Glibc)
import Glibc
#endif

/// `O_NOATIME` (a GNU flag Swift does not import): reading metadata must not
/// move the atime that records the last use for LRU.
let openNoAccessTime: Int32 = 0o1000000

/// `openat(directory, name, flags)` without moving the file's access time
/// (`O_NOATIME`), or, where that is refused (EPERM: another owner's file),
/// a plain open: every read the cache makes of its own files. -1 and
/// `errno` (the last open's) on failure.
func openWithoutAccessTime(at directory: Int32, _ name: UnsafePointer<CChar>, flags: Int32) -> Int32 {
    let fd = openat(directory, name, flags | openNoAccessTime)
    return fd < 0 && errno == EPERM ? openat(directory, name, flags) : fd
}

extension DiskCacheStore {
    /// Opens a body at `path` for reading without moving its access time,
    /// the last use that `prune` goes by: `O_NOATIME`, or a plain open where
    /// that is refused (another owner's file). For the copies that hand an
    /// entry on (`-o`, `--output-dir`): the cache's own reads never move the
    /// last use (SPEC §4), and `--offline` only looks. -1 and `errno` on failure.
    public static func openForReading(_ path: String) -> Int32 {
        path.withCString { openWithoutAccessTime(at: AT_FDCWD, $0, flags: O_RDONLY | O_CLOEXEC) }
    }
}

extension DiskCacheStore {
    /// Reads and parses `<key>.meta`; also returns its `fstat` (its atime
    /// is the last use of a bodiless entry). nil for anything that is not a complete metadata file of ours:
    /// missing, not a regular file (a FIFO or device never blocks: it is
    /// opened non-blocking), too large, unreadable, partial or foreign.
    func readMetadata(_ key: String) -> (CacheMetadata, stat)? {
        let fd = withMetadataName(key) { openWithoutAccessTime(at: directoryFD, $0, flags: O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }   // read-only: nothing to report
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG,
              info.st_size > 0, info.st_size <= CacheDefaults.maxMetadataSize else { return nil }
        let size = Int(info.st_size)
        let meta = withUnsafeTemporaryAllocation(byteCount: size, alignment: 1) { buffer -> CacheMetadata? in
            guard let base = buffer.baseAddress else { return nil }
            var offset = 0
            while offset < size {
                let n = read(fd, base + offset, size - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return nil }
                offset += n
            }
            return CacheMetadata.decode(UnsafeRawBufferPointer(buffer))
        }
        guard let meta else { return nil }
        return (meta, info)
    }

    /// The metadata file of a hit: one open and one 4 KiB read (every file
    /// this cache writes for an ordinary response fits), without an `fstat`;
    /// only a file that fills the read goes the long way (`readMetadata`).
    /// nil when absent (a miss costs one failed open), unreadable, partial or
    /// foreign. Not a regular file: a directory fails the read, a FIFO
    /// (non-blocking) reads nothing, a device fills the buffer and goes the
    /// long way, where `fstat` rejects it. Whatever a foreign file yields must
    /// still decode and name the body's inode, size and mtime to be a hit.
    func readMetadataForHit(_ key: String) -> CacheMetadata? {
        switch readSmallMetadata(key) {
        case .metadata(let meta): return meta
        case .larger: return readMetadata(key)?.0
        case .none: return nil
        }
    }

    enum SmallRead {
        case metadata(CacheMetadata)
        /// The file filled the 4 KiB read: it may be larger.
        case larger
    }

    private func readSmallMetadata(_ key: String) -> SmallRead? {
        let fd = withMetadataName(key) { openWithoutAccessTime(at: directoryFD, $0, flags: O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }   // read-only: nothing to report
        let capacity = CacheDefaults.sidecarFirstRead
        return withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer -> SmallRead? in
            guard let base = buffer.baseAddress else { return nil }
            // One read: a short read of a regular file is its end (the cache
            // never writes a published file in place, it renames a new one).
            var count = -1
            while count < 0 {
                count = read(fd, base, capacity)
                if count < 0 && errno != EINTR { return nil }
            }
            if count == capacity { return .larger }
            guard count > 0, let meta = CacheMetadata.decode(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count]))
            else { return nil }
            return .metadata(meta)
        }
    }

    /// Writes an encoded sidecar to a locked temporary file in `.tmp` (no
    /// `fsync`: see docs/cache.md on durability); the caller publishes it with
    /// `rename` (under the commit lock) and discards it. Errors name the
    /// temporary path; the file is removed.
    func writeTemporaryMetadata(_ encoded: [UInt8], key: String) throws(DiskCacheError) -> TemporaryFile {
        var file = try createNamedTemporaryFile(for: key, suffix: CacheFileName.metadataSuffix)
        do throws(DiskCacheError) {
            var failure: DiskCacheError?
            encoded.withUnsafeBytes { bytes in
                do throws(DiskCacheError) { try file.write(bytes) } catch { failure = error }
            }
            if let failure { throw failure }
        } catch {
            file.discard()
            throw error
        }
        return file
    }

    /// Calls `body` with `<key>.meta` as a C string, built on the stack.
    func withMetadataName<T>(_ key: String, _ body: (UnsafePointer<CChar>) -> T) -> T {
        var key = key
        return key.withUTF8 { keyBytes in
            withUnsafeTemporaryAllocation(of: CChar.self, capacity: keyBytes.count + 6) { name in
                var i = 0
                for byte in keyBytes { name[i] = CChar(bitPattern: byte); i += 1 }
                for byte in ".meta".utf8 { name[i] = CChar(bitPattern: byte); i += 1 }
                name[i] = 0
                return body(UnsafePointer(name.baseAddress!))
            }
        }
    }
}
