import Support
#if canImport(Glibc)
import Glibc
#endif

/// Streams one body into the cache.
///
/// The write protocol, which is what makes a hit trustworthy under SIGKILL at
/// any instant and with any number of processes sharing the directory,
/// without a lock:
///
/// 1. The body streams into an unpublished file in the cache directory: an
///    unnamed one (`O_TMPFILE`), or `DIR/.tmp/<md5>.<pid>.<n>` where the file
///    system has no `O_TMPFILE`. Its XXH3-128 is computed on the way, on the
///    writer's thread (`BodyHash`: memory speed, nothing read twice). A kill
///    here leaves nothing (an unnamed file dies with its descriptor), or a
///    locked leftover in `.tmp` that the sweep removes.
/// 2. `commit`: `fstat` the file (size, mtime), and set the metadata —
///    URL, status, validators, freshness headers, type, stored time, size,
///    mtime, digest and its name — on the file itself, in the extended
///    attribute `user.asyncfetch.meta`. Still nothing visible.
/// 3. Publish: `linkat` gives an unnamed file a name in `.tmp`, and one
///    `rename` puts it over `DIR/<md5>`. The rename is atomic: a reader sees
///    the old entry or the new one, and body and metadata are one inode, so
///    they cannot disagree. Concurrent writers of one key each publish a
///    whole entry; the last rename wins. A kill between `linkat` and
///    `rename` leaves a complete, unlocked file in `.tmp` that the sweep
///    removes once its writer is gone.
///
/// A reader (`DiskCacheStore.lookup`) takes no lock: it reads the record and
/// `stat`s the body, and accepts the entry only when the file has the size
/// and mtime the record names and the record names this key. A 304 replaces
/// the record in place (`updateMetadata`).
///
/// No `fsync`: after a power loss the newest entries may be missing or cut
/// short; a hit's size check and `cache verify`'s digest check mean neither
/// is served (docs/cache.md says on which file systems that holds).
///
/// Sidecar fallback (a file system without user extended attributes, or a
/// record too large for one): the metadata, recording also the body's inode,
/// goes to `DIR/.tmp/…meta`; then, under the directory's commit lock
/// (`CommitLock`), the sidecar is renamed onto `DIR/<md5>.meta` and the body
/// onto `DIR/<md5>`. Between the two renames (or after a kill there) the new
/// sidecar sits beside the old body, or beside none: its inode is not the
/// body's, so it is a miss. The sidecar goes first so that no instant shows
/// a body without metadata (removal, too, unlinks the body first): the cache
/// never leaves a key-named file without its metadata, so such a file is not
/// the cache's own, and maintenance leaves it alone (docs/cache.md). The
/// lock makes sidecar writers of one key publish pair by pair.
///
/// Any error (full disk, read-only or vanished directory) throws a
/// `DiskCacheError` of kind `io` naming the path, and the unpublished files
/// are removed: nothing half-written ever becomes an entry.
///
/// Threading: one owner at a time (the fetch engine's loop thread while the
/// transfer runs, the awaiting task before and after).
public final class CacheWriter: @unchecked Sendable {
    /// The entry's key, 32 lowercase hex digits: made when asked (an error, a sidecar,
    /// a kept partial). A download names its file and its record from `keyDigest`, with
    /// no string made (a 32-digit `String` made and freed per cold URL before).
    public var key: String { keyDigest.hex }
    /// The key as its digest: what the committed entry is named by.
    private let keyDigest: MD5.Digest
    private let store: DiskCacheStore
    /// Held inline (a noncopyable struct); changed by one owner at a time (see the threading note above).
    @exclusivity(unchecked) private var file: TemporaryFile
    /// The body's digest so far. Nil while the body is exactly `head`, given in one
    /// piece (`append(_: [UInt8])`: a body the transfer held whole, every small one):
    /// `commit` then hashes the head in one call (XXH3-128, `BodyHash.stored(ofWhole:)`),
    /// with no streaming state made, fed and freed, nor an object for it (~0.9 k
    /// instructions per cold URL). Made, and fed the head, before any other byte is added.
    ///
    /// The writer's changing state is used by one owner at a time (above): no dynamic exclusivity
    /// check (a `swift_beginAccess` per read or change, ~60 instructions, five a cold URL).
    @exclusivity(unchecked) private var hash: BodyHash?
    @exclusivity(unchecked) public private(set) var bytesWritten: Int64 = 0
    /// The first `CacheDefaults.headLimit` bytes, kept for image sniffing without rereading the file.
    @exclusivity(unchecked) public private(set) var head: [UInt8] = []
    /// Whether `append` keeps the `head`: a writer whose head nobody reads
    /// (the remote tier's, whose record names the format) keeps none, one
    /// copy of up to `CacheDefaults.headLimit` bytes less per body.
    public var keepsHead = true
    /// Where a resumed body starts over on `reset` (a retried attempt): the
    /// kept part, its digest so far and its head.
    private let resumed: (length: Int64, hash: BodyHash, head: [UInt8])?
    /// Whether this writer continues a kept partial body.
    public var isResumed: Bool { resumed != nil }

    /// `keyDigest`: the entry's key (a checked key's digest, `DiskCacheStore.digest(ofKey:)`, or a `CacheKey`'s).
    init(store: DiskCacheStore, keyDigest: MD5.Digest) throws(DiskCacheError) {
        self.store = store
        self.keyDigest = keyDigest
        file = try store.createTemporaryFile(for: keyDigest.hex)
        resumed = nil
    }

    /// `hash`, made (and fed the head, the body so far) if it was not yet.
    private func streamingHash() throws(DiskCacheError) -> BodyHash {
        if let hash { return hash }
        let made = try BodyHash()
        head.withUnsafeBytes { made.update($0) }
        hash = made
        return made
    }

    /// The digest of the body written, its algorithm and as a record keeps it.
    private func storedDigest() -> (algorithm: DigestAlgorithm, stored: CacheMetadata.StoredHex) {
        guard let hash else { return (.xxh3, head.withUnsafeBytes { BodyHash.stored(ofWhole: $0) }) }
        return (hash.algorithm, hash.stored())
    }

    /// Continues `partial`: its bytes are hashed (one read of the kept part)
    /// and its head kept; new bytes are appended.
    init(store: DiskCacheStore, keyDigest: MD5.Digest, resuming partial: PartialBody) throws(DiskCacheError) {
        self.store = store
        self.keyDigest = keyDigest
        var taken = try store.takePartial(partial)
        do throws(DiskCacheError) {
            let digest = try BodyHash()
            var prefix: [UInt8] = []
            var offset: Int64 = 0
            while true {
                let chunk = try taken.read(at: offset, count: CacheDefaults.rehashReadBytes)
                if chunk.isEmpty { break }
                chunk.withUnsafeBytes { digest.update($0) }
                if prefix.count < CacheDefaults.headLimit { prefix += chunk.prefix(CacheDefaults.headLimit - prefix.count) }
                offset += Int64(chunk.count)
            }
            guard offset == partial.length else {
                throw DiskCacheError(.io, path: partial.path, message: "\(partial.path) changed while it was being resumed")
            }
            let snapshot = try BodyHash()
            snapshot.restore(from: digest)
            hash = digest
            head = prefix
            bytesWritten = offset
            resumed = (offset, snapshot, prefix)
        } catch {
            taken.discard()
            throw error
        }
        file = taken
    }

    public func append(_ bytes: UnsafeRawBufferPointer) throws(DiskCacheError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let hash = try streamingHash()   // before the head grows: it is fed the body so far
        if keepsHead && head.count < CacheDefaults.headLimit {
            let take = min(CacheDefaults.headLimit - head.count, bytes.count)
            head.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
        }
        try file.write(bytes)
        hash.update(bytes)
        bytesWritten += Int64(bytes.count)
    }

    /// Appends bytes held in an array. When they are the body's first bytes
    /// and fit the head, the array itself becomes the head (shared, not copied).
    public func append(_ bytes: [UInt8]) throws(DiskCacheError) {
        guard head.isEmpty, bytes.count <= CacheDefaults.headLimit, !bytes.isEmpty else {
            var failure: DiskCacheError?
            bytes.withUnsafeBytes { raw in
                do throws(DiskCacheError) { try append(raw) } catch { failure = error }
            }
            if let failure { throw failure }
            return
        }
        var failure: DiskCacheError?
        bytes.withUnsafeBytes { raw in
            do throws(DiskCacheError) { try file.write(raw) } catch { failure = error }
            // Without a hash, the body so far is the head, empty: it becomes `bytes`, hashed at the end.
            if failure == nil, let hash { hash.update(raw) }
        }
        if let failure { throw failure }
        head = bytes
        bytesWritten += Int64(bytes.count)
    }

    /// Starts over (a retried download): from the kept part of a resumed body.
    public func reset() throws(DiskCacheError) {
        if let resumed {
            try file.truncate(to: resumed.length)
            try streamingHash().restore(from: resumed.hash)   // a resumed writer's is made at its start
            head = resumed.head
            bytesWritten = resumed.length
            return
        }
        try file.truncate()
        hash = nil   // the body so far is the head, empty
        head.removeAll()
        bytesWritten = 0
    }

    /// Keeps what was received of a body cut off mid-transfer, to be resumed
    /// (`DiskCacheStore+Partial.swift`): `metadata` (URL, status, validators)
    /// is recorded on the file with the length kept. Returns false, and keeps
    /// nothing, where records are not possible. The writer is done afterwards.
    public func keepPartial(_ metadata: CacheMetadata) throws(DiskCacheError) -> Bool {
        defer { file.discard() }
        var meta = metadata
        meta.key = key
        meta.hasBody = true
        meta.bodyLength = bytesWritten
        meta.bodyDigest = ""
        meta.bodyInode = 0
        meta.bodyMtimeNs = 0
        meta.storedAt = currentUnixTime()
        guard store.placement.readsRecords, store.setRecord(fd: file.fd, meta) == nil else {
            if isResumed { store.removePartial(key) }
            return false
        }
        try store.publishPartial(&file, key: key)
        file.markPublished()
        return true
    }
    /// The digest of the body written so far, as `commit` will record it
    /// (lowercase hex; for XXH3 this does not end the stream). The remote
    /// cache tier compares it with the digest a downloaded record names
    /// before it commits.
    public var digest: (algorithm: DigestAlgorithm, hex: String) {
        guard let hash else { return (.xxh3, head.withUnsafeBytes { BodyHash.hex(ofWhole: $0) }) }
        return (hash.algorithm, hash.hex())
    }

    /// Up to `count` bytes of the body written so far, from `offset`.
    /// A name another reader (a decoder) can open the unpublished body by,
    /// read-only: the file's own path, or `/proc/self/fd/N` for an unnamed one.
    public var readablePath: String { file.path ?? "/proc/self/fd/\(file.fd)" }

    public func read(at offset: Int64, count: Int) throws(DiskCacheError) -> [UInt8] {
        try file.read(at: offset, count: count)
    }

    /// Publishes the body and `metadata` (whose key, body fields and stored
    /// time are filled in here, and whose URL is recorded normalised and
    /// without its password: `CacheKey.storedURL`) as the entry for this
    /// key. See the protocol above.
    /// `metadata` is taken (`consuming`): a caller's last use moves it in, with no copy of
    /// its strings and headers (a copy and a destroy through its value witnesses, ~1 k
    /// instructions per download).
    /// `keepingBodyOnFailure`: when publishing fails, the unpublished body
    /// stays readable (`read`, `readablePath`) until `abandon` (a full disk
    /// at this last step must not lose a body the caller still delivers);
    /// else it is gone with the failure.
    /// `urlIsStored`: `metadata.url` is a key's `CacheKey.storedURL` already (every record
    /// the loader writes), so it is not normalised again (two scans of the URL per download).
    public func commit(_ metadata: consuming CacheMetadata, keepingBodyOnFailure: Bool = false,
                       urlIsStored: Bool = false) throws(DiskCacheError) -> CacheEntry {
        do throws(DiskCacheError) {
            let entry = try publishEntry(metadata, urlIsStored: urlIsStored)
            file.discard()
            return entry
        } catch {
            if !keepingBodyOnFailure { file.discard() }
            throw error
        }
    }

    /// `commit`'s work; the caller discards the file.
    private func publishEntry(_ meta: consuming CacheMetadata, urlIsStored: Bool) throws(DiskCacheError) -> CacheEntry {
        let info = try file.status()
        if urlIsStored {
            assert(CacheKey.recordedURL(meta.url) == meta.url, "'\(meta.url)' is not a stored URL")
        } else {
            meta.url = CacheKey.recordedURL(meta.url)
        }
        meta.storedKey = .digest(keyDigest)
        meta.hasBody = true
        meta.bodyLength = Int64(info.st_size)
        (meta.digestAlgorithm, meta.storedDigest) = storedDigest()
        meta.bodyInode = 0
        meta.bodyMtimeNs = nanoseconds(info.st_mtim)
        meta.storedAt = currentUnixTime()
        guard meta.bodyLength == bytesWritten else {
            throw DiskCacheError(.io, path: file.displayPath,
                                 message: "\(file.displayPath) holds \(meta.bodyLength) bytes, \(bytesWritten) were written")
        }
        // The body's path is built where it is used (a sidecar, an error): a record on the body is
        // published by name in the cache's directory (`linkat`), and the result builds the path it shows.
        if store.placement.mode(store) != .sidecar {
            guard let code = store.setRecord(fd: file.fd, meta) else {
                try store.publish(&file, digest: keyDigest)
                // The record's last use is the entry (it moves in): with `meta.storedAt` read after it in
                // the call, it was copied whole and the copy destroyed (a retain and release of every string).
                let storedAt = meta.storedAt
                return CacheEntry(key: keyDigest, directory: store.directory, metadata: consume meta, lastAccess: storedAt,
                                  inode: UInt64(info.st_ino), recordOnBody: true)
            }
            guard code == ENOTSUP || DiskCacheStore.isTooLarge(code) else {
                throw DiskCacheError.system("cannot record metadata for", path: store.bodyPath(key), errno: code)
            }
        }
        let bodyPath = store.bodyPath(key)
        meta.bodyInode = UInt64(info.st_ino)
        var metaFile = try store.writeTemporaryMetadata(meta.encoded(), key: key)
        defer { metaFile.discard() }
        _ = try store.name(&file, key: key)
        try store.commitLock.withLock { () throws(DiskCacheError) in
            try metaFile.publish(as: store.metadataPath(key))
            do throws(DiskCacheError) {
                try file.publish(as: bodyPath)
            } catch {
                // Under the lock the new sidecar is ours: take it back, and the old
                // body with it (its sidecar is gone), body first as every removal.
                // The publish error is what is reported: a sidecar left beside the old
                // body names the new body's inode, so it is a miss that verify removes.
                _ = unlink(bodyPath)
                _ = unlink(store.metadataPath(key))
                throw error
            }
        }
        let storedAt = meta.storedAt
        return CacheEntry(key: keyDigest, directory: store.directory, metadata: consume meta, lastAccess: storedAt,
                          inode: UInt64(info.st_ino), recordOnBody: false)
    }

    /// Keeps the body without storing it (a `no-store` response): gives it a
    /// name of its own in `.tmp` (`<key>.<pid>.<n>.deliver`), which the caller
    /// removes once it has delivered the body, and returns that path. The
    /// writer is done afterwards.
    public func keepUnstored() throws(DiskCacheError) -> String {
        defer { file.discard() }
        let path = try store.name(&file, key: key, suffix: TemporaryFileName.deliverySuffix)
        file.markPublished()
        return path
    }

    /// Closes and deletes the unpublished file. Safe to call more than once.
    public func abandon() {
        file.discard()
    }
}

func nanoseconds(_ time: timespec) -> Int64 {
    Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}
