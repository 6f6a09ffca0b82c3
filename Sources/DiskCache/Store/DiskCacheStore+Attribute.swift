#if canImport(Glibc)
import Glibc
#endif
import CCrypto
import Synchronization

/// An entry's metadata on its body's inode: the extended attribute
/// `user.asyncfetch.meta` (SPEC §4). It is set on the unpublished file,
/// before the one `rename` that publishes body and metadata together, so a
/// reader sees the old entry or the new one, whole, and needs no lock. A hit
/// costs two system calls: `getxattrat` (`lgetxattr` on kernels before
/// 6.13) and the body's `stat`, which checks the size and mtime the record
/// names (a body cut short by a power loss, or edited in place through a
/// hard link, is a miss).
///
/// Where the file system refuses user extended attributes (ENOTSUP: ramfs,
/// vfat, NFS without xattr support, tmpfs before Linux 6.6), the directory
/// keeps its metadata in sidecars (`<md5>.meta`, `DiskCacheStore+Metadata`),
/// with the two-file protocol described on `CacheWriter`. That choice is made
/// once per directory, by the first write, and kept in the marker file
/// `DIR/.asyncfetch-store`. A record too large for one attribute (ext4 takes
/// about 4 KiB: a very long URL or many Vary headers) goes to a sidecar for
/// that entry alone.
extension DiskCacheStore {
    static let metadataAttribute = "user.asyncfetch.meta"
    /// What a hit asks for first: every ordinary record fits (about 500
    /// bytes). The kernel allocates and zeroes as many bytes as asked for
    /// on every call, so the full `CacheDefaults.maxRecordAttributeSize` is asked for only when this
    /// does not fit (ERANGE).
    static let attributeFirstRead = Int(CDISK_THREAD_BUFFER_SIZE)   // `readRecord`'s buffer: the thread's own

    /// The record on `key`'s body, `DIR/<key>` (a symlink is never followed:
    /// it has no such attribute), whatever key and URL it names.
    func readRecord(key: String) -> CacheMetadata.Decoded {
        // Explicit C strings: passing a String where C wants `const char *`
        // copies it into a new array on every call.
        key.withCString { readRecord(name: $0, key: nil, url: nil, answerOnly: false) }
    }

    /// The record on the body called `name` (a key, as a C string). With
    /// `key`, a record naming another key, or another URL than `url` when
    /// one is given, is a `.mismatch` (compared in place: see
    /// `CacheMetadata.decode(_:key:url:)`). `answerOnly`: see
    /// `lookup(_:accessTime:answerOnly:)`.
    func readRecord(name: UnsafePointer<CChar>, key: MD5.Digest?, url: String?, answerOnly: Bool) -> CacheMetadata.Decoded {
        // The whole path is joined by the C side, and only where the kernel lacks `getxattrat`.
        directory.withCString { cDirectory in
            readRecord(name: name, cDirectory: cDirectory, capacity: Self.attributeFirstRead, key: key, url: url,
                       answerOnly: answerOnly)
        }
    }

    private func readRecord(name: UnsafePointer<CChar>, cDirectory: UnsafePointer<CChar>, capacity: Int,
                            key: MD5.Digest?, url: String?, answerOnly: Bool) -> CacheMetadata.Decoded {
        // The first read's buffer is the thread's own (the record is decoded before this
        // thread runs anything else): `withUnsafeTemporaryAllocation` puts more than 1 KiB
        // on the heap (a `posix_memalign` and a `free` per hit, ~400 instructions), and a
        // buffer on the stack (`InlineArray(repeating: 0)`) was zeroed on every hit (~130).
        if capacity == Self.attributeFirstRead, let first = cdisk_thread_buffer(capacity) {
            return readRecord(name: name, cDirectory: cDirectory, into: UnsafeMutableRawBufferPointer(start: first, count: capacity),
                              key: key, url: url, answerOnly: answerOnly)
        }
        return withUnsafeTemporaryAllocation(byteCount: capacity, alignment: 1) { buffer in
            readRecord(name: name, cDirectory: cDirectory, into: buffer, key: key, url: url, answerOnly: answerOnly)
        }
    }

    private func readRecord(name: UnsafePointer<CChar>, cDirectory: UnsafePointer<CChar>, into buffer: UnsafeMutableRawBufferPointer,
                            key: MD5.Digest?, url: String?, answerOnly: Bool) -> CacheMetadata.Decoded {
        guard let base = buffer.baseAddress else { return .invalid }
        let capacity = buffer.count
        let count = Self.metadataAttribute.withCString { cdisk_getxattrat(directoryFD, cDirectory, name, $0, base, capacity) }
        guard count > 0 else {
            if count < 0 && errno == ERANGE && capacity < CacheDefaults.maxRecordAttributeSize {
                return readRecord(name: name, cDirectory: cDirectory, capacity: CacheDefaults.maxRecordAttributeSize, key: key, url: url,
                                  answerOnly: answerOnly)
            }
            if count < 0 && errno == ENOENT { return .noFile }
            if count < 0 && errno == ENOTSUP { placement.noteRefused() }
            return .invalid
        }
        // The decoder's answer is this read's answer: the record is built
        // once, in the caller's place (no copy of it into another enum).
        return CacheMetadata.decode(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count]), key: key,
                                    url: url, answerOnly: answerOnly)
    }

    /// Reads records by their whole path (`lgetxattr`) from now on, in the whole
    /// process, as on a kernel without `getxattrat` (Linux < 6.13). For tests.
    static func readAttributesByPath() { cdisk_refuse_getxattrat() }

    /// Sets `meta`'s record on an open file (the unpublished body, or a published
    /// one after a 304). nil on success, else the errno: ENOTSUP (the file
    /// system refuses: the directory turns to sidecars), E2BIG, ENOSPC or
    /// ERANGE (too large for one attribute: a sidecar for this entry), or
    /// another failure.
    func setRecord(fd: Int32, _ meta: CacheMetadata) -> Int32? {
        // Its bytes as encoded, on the stack (no array made). `withCString`: no copy of the name into a
        // new array, as the implicit conversion makes (one per entry).
        let failed = meta.withEncoded { record in
            Self.metadataAttribute.withCString { cdisk_fsetxattr(fd, $0, record.baseAddress, record.count) != 0 }
        }
        guard failed else {
            placement.noteWorks(store: self)
            return nil
        }
        let code = errno
        if code == ENOTSUP { placement.noteRefused(store: self) }
        return code
    }

    /// Whether `errno` from `setRecord` means "too large for an attribute".
    static func isTooLarge(_ code: Int32) -> Bool { code == E2BIG || code == ENOSPC || code == ERANGE }
}

/// Where a cache directory keeps metadata: on the bodies' inodes, or in
/// sidecars. Unknown until the marker file is read or the first write
/// decides; while unknown, a reader that finds no body also looks for a
/// sidecar (a remembered error in a sidecar directory has no body).
final class MetadataPlacement: Sendable {
    enum Mode: UInt8 { case unknown = 0, attribute = 1, sidecar = 2 }

    static let markerName = ".asyncfetch-store"
    private static let attributeText = "metadata=xattr\n"
    private static let sidecarText = "metadata=sidecar\n"

    private let state: Atomic<UInt8>
    private let markerRead = Atomic<Bool>(false)
    /// Set by `DiskCacheStore(metadataAttributes: false)`: sidecars only,
    /// records neither read nor written (tests; a forced store writes no marker).
    let forcedSidecar: Bool

    init(forceSidecar: Bool) {
        forcedSidecar = forceSidecar
        state = Atomic(forceSidecar ? Mode.sidecar.rawValue : Mode.unknown.rawValue)
    }

    var readsRecords: Bool { !forcedSidecar && mode(nil) != .sidecar }

    /// The directory's mode, reading the marker on first need.
    func mode(_ store: DiskCacheStore?) -> Mode {
        let current = Mode(rawValue: state.load(ordering: .relaxed)) ?? .unknown
        guard current == .unknown, let store, !markerRead.exchange(true, ordering: .relaxed) else { return current }
        let found = Self.readMarker(store)
        guard found != .unknown else { return found }
        // A refused record decided meanwhile (`noteRefused`) is not overwritten by an older marker.
        let (exchanged, meanwhile) = state.compareExchange(expected: Mode.unknown.rawValue, desired: found.rawValue,
                                                           ordering: .relaxed)
        return exchanged ? found : Mode(rawValue: meanwhile) ?? .unknown
    }

    /// A record was set: the directory keeps records (marker written once).
    func noteWorks(store: DiskCacheStore) {
        decide(.attribute, store: store)
    }

    /// The file system refused a record: sidecars from now on.
    func noteRefused(store: DiskCacheStore? = nil) {
        if let store { decide(.sidecar, store: store) } else { state.store(Mode.sidecar.rawValue, ordering: .relaxed) }
    }

    private func decide(_ mode: Mode, store: DiskCacheStore) {
        let previous = state.exchange(mode.rawValue, ordering: .relaxed)
        guard previous != mode.rawValue, !forcedSidecar else { return }
        Self.writeMarker(mode, store: store)
    }

    private static func readMarker(_ store: DiskCacheStore) -> Mode {
        let fd = openat(store.directoryFD, markerName, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return .unknown }
        defer { _ = close(fd) }   // read-only: nothing to report
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        guard n > 0 else { return .unknown }
        let text = String(decoding: buffer[0..<n], as: UTF8.self)
        return text == attributeText ? .attribute : text == sidecarText ? .sidecar : .unknown
    }

    /// Best effort, written once (`O_EXCL`): another process deciding at
    /// the same time decides the same (one file system), and a missing
    /// marker only means the next process decides again.
    private static func writeMarker(_ mode: Mode, store: DiskCacheStore) {
        let fd = openat(store.directoryFD, markerName, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let text = mode == .attribute ? attributeText : sidecarText
        var bytes = Array(text.utf8)
        let written = write(fd, &bytes, bytes.count)
        _ = close(fd)
        if written != bytes.count { _ = unlinkat(store.directoryFD, markerName, 0) }   // a partial marker would say nothing
    }
}
