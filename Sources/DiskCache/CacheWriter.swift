#if canImport(Glibc)
import Glibc
#endif

/// Streams one body into the cache.
///
/// The write protocol, which is what makes a hit trustworthy under SIGKILL at
/// any instant and with any number of processes sharing the directory:
///
/// 1. The body streams into `DIR/.tmp/<md5>.<pid>.<n>` (created exclusively,
///    mode 0600, held under an `flock`); its MD5 is computed on the way
///    (`BodyDigest`: inline for the first MiB, then by tasks reading the
///    written bytes back behind the stream).
///    Nothing outside `.tmp` changes, so a kill here leaves only a leftover,
///    which a later sweep removes (its lock is free once the writer is dead;
///    see `DiskCacheStore.sweepTemporaryFiles`).
/// 2. `commit`: the digest is finished (the bytes no task has hashed yet are
///    read back), then `fsync` and `fstat` the body (inode, size, mtime). The
///    metadata, recording that inode, size, mtime and the digest, is written
///    to `.tmp` and `fsync`ed too. Still nothing visible.
/// 3. Under the directory's commit lock (`CommitLock`): `rename` the body
///    onto `DIR/<md5>`, then the metadata onto `DIR/<md5>.meta`. Each rename
///    is atomic: readers see the old file or the new one, never a mix. Then,
///    still under the lock, a copy of the metadata goes onto the body as an
///    extended attribute (a hit reads it in one call; best effort, see
///    `DiskCacheStore+Attribute.swift`): a copy exists only on a body whose
///    metadata file said the same when it was written.
///
/// A reader (`DiskCacheStore.lookup`) takes no lock: it accepts an entry only
/// when the file at `DIR/<md5>` has exactly the inode, size and mtime that
/// its metadata names — the copy on the body (which must also name this
/// key's URL), else `DIR/<md5>.meta`. Between the two renames, or after a
/// kill between them, the new body (still without a copy) sits beside the
/// old metadata: they disagree, so it is a miss (and `cache verify` removes
/// the pair). The lock makes concurrent writers
/// of one key publish pair by pair, so the last committer's body and
/// metadata both end up in place and the entry is intact. A hit therefore
/// never serves a body its metadata does not describe; `cache verify`
/// additionally rereads every body against the recorded length and MD5.
///
/// Any error (full disk, read-only or vanished directory) throws a
/// `DiskCacheError` of kind `io` naming the path, and the temporary files
/// are removed: nothing half-written ever becomes an entry.
///
/// Threading: one owner at a time (the fetch engine's loop thread while the
/// transfer runs, the awaiting task before and after).
public final class CacheWriter: @unchecked Sendable {
    public let key: String
    public var temporaryPath: String { file.path }
    private let store: DiskCacheStore
    private let file: TemporaryFile
    private let digest: BodyDigest
    public private(set) var bytesWritten: Int64 = 0
    /// The first `headLimit` bytes, kept for image sniffing without rereading the file.
    public private(set) var head: [UInt8] = []
    public static let headLimit = 64 * 1024

    init(store: DiskCacheStore, key: String) throws(DiskCacheError) {
        self.store = store
        self.key = key
        file = try store.createTemporaryFile(for: key)
        do { digest = try BodyDigest(fd: file.fd, path: file.path) } catch {
            file.discard()
            throw error
        }
    }

    // Digest tasks may still be queued: they must not read the file once it is closed.
    deinit { digest.close() }

    public func append(_ bytes: UnsafeRawBufferPointer) throws(DiskCacheError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if head.count < Self.headLimit {
            let take = min(Self.headLimit - head.count, bytes.count)
            head.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
        }
        try file.write(bytes)
        digest.append(bytes)
        bytesWritten += Int64(bytes.count)
    }

    /// Starts over (a retried download).
    public func reset() throws(DiskCacheError) {
        digest.reset()   // first: no digest task reads the file while it is truncated
        try file.truncate()
        head.removeAll()
        bytesWritten = 0
    }

    /// Publishes the body and `metadata` (whose body fields and stored time
    /// are filled in here) as the entry for this key. See the protocol above.
    public func commit(_ metadata: CacheMetadata) throws(DiskCacheError) -> CacheEntry {
        defer { file.discard() }
        let bodyMD5 = try digest.finish()
        let info = try file.status()
        var meta = metadata
        meta.hasBody = true
        meta.bodyLength = Int64(info.st_size)
        meta.bodyMD5 = bodyMD5
        meta.bodyInode = UInt64(info.st_ino)
        meta.bodyMtimeNs = nanoseconds(info.st_mtim)
        meta.storedAt = currentTime()
        guard meta.bodyLength == bytesWritten else {
            throw DiskCacheError(.io, path: file.path, message: "\(file.path) holds \(meta.bodyLength) bytes, \(bytesWritten) were written")
        }
        let encoded = meta.encoded()
        try file.syncData()
        let metaFile = try store.writeTemporaryMetadata(encoded, key: key)
        defer { metaFile.discard() }
        let bodyPath = store.bodyPath(key)
        try store.commitLock.withLock { () throws(DiskCacheError) in
            try file.publish(as: bodyPath)
            do throws(DiskCacheError) {
                try metaFile.publish(as: store.metadataPath(key))
            } catch {
                // Under the lock the new body is ours: take it back, and the
                // old metadata with it (it describes a body that is gone).
                _ = unlink(store.metadataPath(key))
                _ = unlink(bodyPath)
                throw error
            }
            // Only now, with the metadata file describing this body, its copy
            // goes onto the body (still open: the same inode whatever the path).
            store.writeMetadataAttribute(fd: file.fd, encoded)
        }
        return CacheEntry(key: key, bodyPath: bodyPath, metadata: meta,
                          lastAccess: meta.storedAt)
    }

    /// Closes and deletes the temporary file. Safe to call more than once.
    public func abandon() {
        digest.close()
        file.discard()
    }
}

/// Unix seconds in whole microseconds (see `Fetch.currentUnixTime`, which
/// DiskCache does not depend on): a stored time prints in at most 16 digits.
func currentTime() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec / 1000)) / 1e6
}

func nanoseconds(_ time: timespec) -> Int64 {
    Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
