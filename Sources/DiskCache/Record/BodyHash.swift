import CXXHash

/// A streaming digest of one algorithm. Not thread-safe: one owner at a time.
final class BodyHash: @unchecked Sendable {
    let algorithm: DigestAlgorithm
    private let xxh: OpaquePointer?
    private let md5: StreamingMD5?

    init(_ algorithm: DigestAlgorithm = .current) throws(DiskCacheError) {
        self.algorithm = algorithm
        switch algorithm {
        case .xxh3:
            guard let state = cxxh_new() else {
                throw DiskCacheError(.io, path: "", message: "libxxhash could not create an XXH3 state (out of memory)")
            }
            xxh = state
            md5 = nil
        case .md5:
            xxh = nil
            md5 = try StreamingMD5()
        }
    }

    deinit { cxxh_free(xxh) }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if let xxh {
            // XXH3_128bits_update fails only for a NULL state or input, which cannot happen here.
            _ = cxxh_update(xxh, base, bytes.count)
        } else {
            md5?.update(bytes)
        }
    }

    /// Takes `other`'s progress (the same algorithm: XXH3 only; an MD5 is
    /// never resumed).
    func restore(from other: BodyHash) {
        if let xxh, let source = other.xxh { cxxh_copy(xxh, source) }
    }

    /// Forgets everything so far (a retried download).
    func reset() {
        // XXH3_128bits_reset fails only for a NULL state, which cannot happen here.
        if let xxh { _ = cxxh_reset(xxh) } else { md5?.reset() }
    }

    /// The digest as a record keeps it: an XXH3 digest as its 16 bytes, which the
    /// encoder spells as hex on the stack (`hex()` made a string per download, then
    /// freed it), an MD5 as its hex.
    func stored() -> CacheMetadata.StoredHex {
        guard let xxh else { return .text(md5?.finalize() ?? "") }
        return Self.storedXXH3 { cxxh_digest(xxh, $0) }
    }

    /// `stored()` of a `BodyHash()` fed exactly `bytes`, in one call: no
    /// streaming state made, fed and freed (a body written in one piece:
    /// `CacheWriter.append(_: [UInt8])`).
    static func stored(ofWhole bytes: UnsafeRawBufferPointer) -> CacheMetadata.StoredHex {
        storedXXH3 { cxxh_whole(bytes.baseAddress, bytes.count, $0) }
    }

    /// `hex()` of a `BodyHash()` fed exactly `bytes`, in one call.
    static func hex(ofWhole bytes: UnsafeRawBufferPointer) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { digest in
            cxxh_whole(bytes.baseAddress, bytes.count, digest.baseAddress!)
            return MD5.hexString(UnsafeBufferPointer(digest))
        }
    }

    /// The XXH3 digest `write` puts in canonical byte order, as a record keeps it.
    private static func storedXXH3(_ write: (UnsafeMutablePointer<UInt8>) -> Void) -> CacheMetadata.StoredHex {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 2) { words in
            let raw = UnsafeMutableRawPointer(words.baseAddress!)
            write(raw.assumingMemoryBound(to: UInt8.self))
            // Big-endian words: `MD5.Digest` spells `high` then `low`, most significant byte first.
            return .digest(MD5.Digest(high: UInt64(bigEndian: raw.load(as: UInt64.self)),
                                      low: UInt64(bigEndian: raw.load(fromByteOffset: 8, as: UInt64.self))))
        }
    }

    /// Lowercase hex of the digest so far (XXH3 in canonical byte order, as
    /// `xxhsum -H2` prints it; MD5 as `md5sum` does).
    func hex() -> String {
        guard let xxh else { return md5?.finalize() ?? "" }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { digest in
            cxxh_digest(xxh, digest.baseAddress!)
            return MD5.hexString(UnsafeBufferPointer(digest))
        }
    }
}
