import func Support.withUTF8Bytes

/// The names the cache owns. Everything else in the directory is foreign
/// and never touched:
///
/// - `DIR/<key>`: a body (its metadata in its extended attribute), `<key>`
///   being 32 lowercase hex digits;
/// - `DIR/<key>.meta`: a sidecar, where the metadata is not on the body;
/// - `DIR/.tmp/<key>.<pid>.<n>` and `DIR/.tmp/<key>.<pid>.<n>.meta`: files
///   being published or written by process `<pid>` (`<n>` counts within the
///   process);
/// - `DIR/.asyncfetch-store`: where the directory keeps metadata
///   (`MetadataPlacement`).
enum CacheFileName: Equatable {
    case body(String)
    case metadata(String)

    static let metadataSuffix = ".meta"
    static let temporaryDirectory = ".tmp"

    /// Classifies a name in the cache directory; nil for foreign names.
    init?(_ name: String) {
        var name = name
        let parsed: CacheFileName? = name.withUTF8 { bytes in
            if bytes.count == 32 && Self.isKey(bytes) { return .body(String(decoding: bytes, as: UTF8.self)) }
            if bytes.count == 37 && Self.isKey(UnsafeBufferPointer(rebasing: bytes[0..<32])) && Self.hasMetaSuffix(bytes) {
                return .metadata(String(decoding: bytes[0..<32], as: UTF8.self))
            }
            return nil
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// 32 lowercase hex digits: a key, and a name safe to join to a path.
    static func isKey(_ key: String) -> Bool {
        withUTF8Bytes(of: key) { $0.count == 32 && isKey($0) }
    }

    static func isKey(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        // A key's 32 bytes are read 8 at a time (every download checks the key it writes: a byte
        // at a time cost ~350 instructions).
        if bytes.count == 32, let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            return isHex(raw.loadUnaligned(as: UInt64.self)) && isHex(raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                && isHex(raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
                && isHex(raw.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        }
        for byte in bytes {
            guard (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) else { return false }
        }
        return true
    }

    /// Whether each of the 8 bytes of `word` is '0'-'9' or 'a'-'f'. Each byte below 0x80 (checked
    /// first) plus a constant stays below 0x100, so no carry crosses bytes, and a byte's high bit
    /// then says on which side of a bound it is: `b + 0x50` has it from '0' up, `b + 0x46` from
    /// past '9' up, `b + 0x1F` from 'a' up, `b + 0x19` from past 'f' up.
    @inline(__always)
    private static func isHex(_ word: UInt64) -> Bool {
        let high: UInt64 = 0x8080_8080_8080_8080, ones: UInt64 = 0x0101_0101_0101_0101
        guard word & high == 0 else { return false }
        let digit = (word &+ ones &* 0x50) & ~(word &+ ones &* 0x46)
        let letter = (word &+ ones &* 0x1F) & ~(word &+ ones &* 0x19)
        return (digit | letter) & high == high
    }

    private static func hasMetaSuffix(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = bytes.count
        return bytes[n - 5] == 0x2E && bytes[n - 4] == 0x6D && bytes[n - 3] == 0x65 && bytes[n - 2] == 0x74 && bytes[n - 1] == 0x61
    }
}
