#if canImport(Glibc)
import Glibc
#endif
import CCrypto
import Synchronization

/// A copy of an entry's metadata in an extended attribute of its body
/// (`user.asyncfetch.meta`, the same bytes as `<md5>.meta`), so that a hit
/// costs two system calls — `getxattrat` (`lgetxattr` on kernels before
/// 6.13) and the body's `stat` — instead of opening, reading and closing the
/// metadata file first.
///
/// `<md5>.meta` stays the record: it is written first, `scan`, `list`,
/// `verify` and `prune` read it, and a hit falls back to it whenever the copy
/// is missing or unreadable (a filesystem without user extended attributes,
/// metadata too large for one, entries written before the copy existed, a
/// bodiless entry). The copy is part of the body's inode and is written
/// under the commit lock only after the metadata file describing that body
/// is in place (`CacheWriter.commit`), so a copy never tells another story
/// than the metadata file beside it did; a hit still checks the inode, size
/// and mtime it records. A 304 replaces it after the metadata file, under
/// the commit lock; a kill between the two leaves the older copy of the same
/// body (same validators and digest, older freshness), so the next run
/// revalidates again.
extension DiskCacheStore {
    static let metadataAttribute = "user.asyncfetch.meta"

    /// The metadata copy on `key`'s body at `path` (a symlink is never
    /// followed: it has no such attribute), or nil — no body, no copy
    /// (ENODATA), one larger than a hit reads (ERANGE), anything but a
    /// complete copy of ours that decodes — and the caller reads `<md5>.meta`.
    func readMetadataAttribute(key: String, bodyPath path: String) -> CacheMetadata? {
        guard attributes.enabled else { return nil }
        let capacity = 4096
        return withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer -> CacheMetadata? in
            guard let base = buffer.baseAddress else { return nil }
            let count = cdisk_getxattrat(directoryFD, key, path, Self.metadataAttribute, base, capacity)
            guard count > 0 else {
                if count < 0 && errno == ENOTSUP { attributes.disable() }
                return nil
            }
            guard let meta = CacheMetadata.decode(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count])),
                  meta.hasBody else { return nil }
            return meta
        }
    }

    /// Reads copies by their whole path (`lgetxattr`) from now on, in the whole
    /// process, as on a kernel without `getxattrat` (Linux < 6.13). For tests.
    static func readAttributesByPath() { cdisk_refuse_getxattrat() }

    /// Puts the copy on a body just published with its metadata file (by
    /// its descriptor; call with the commit lock held). Best effort: without
    /// it a hit reads the metadata file.
    func writeMetadataAttribute(fd: Int32, _ bytes: [UInt8]) {
        guard attributes.enabled else { return }
        let failed = bytes.withUnsafeBytes { cdisk_fsetxattr(fd, Self.metadataAttribute, $0.baseAddress, $0.count) != 0 }
        if failed { attributes.noteFailure(errno) }
    }

    /// Replaces the copy on a published body (after a 304; call with the
    /// commit lock held, once the body is known to be the entry's). If it
    /// cannot be written, the old copy is removed: a hit then reads the new
    /// metadata file instead of an outdated copy.
    func replaceMetadataAttribute(bodyPath path: String, _ bytes: [UInt8]) {
        guard attributes.enabled else { return }
        let failed = bytes.withUnsafeBytes { cdisk_lsetxattr(path, Self.metadataAttribute, $0.baseAddress, $0.count) != 0 }
        if failed {
            attributes.noteFailure(errno)
            _ = cdisk_lremovexattr(path, Self.metadataAttribute)   // ENODATA/ENOTSUP: nothing outdated is left either way
        }
    }
}

/// Whether the cache's filesystem takes user extended attributes: assumed
/// until one call says it does not (ENOTSUP), then never tried again by
/// this store.
final class AttributeSupport: Sendable {
    private let supported: Atomic<Bool>

    init(enabled: Bool) { supported = Atomic(enabled) }

    var enabled: Bool { supported.load(ordering: .relaxed) }

    func disable() { supported.store(false, ordering: .relaxed) }

    /// A failed write: ENOTSUP turns the copies off; anything else (a value
    /// too large for the filesystem, a full disk) concerns that entry only.
    func noteFailure(_ code: Int32) {
        if code == ENOTSUP { disable() }
    }
}
