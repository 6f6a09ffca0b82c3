import CZlib

/// CRC-32 as PNG uses it (ISO 3309, zlib's `crc32`, which uses the
/// machine's fast paths: a 10 MiB PNG costs a few milliseconds).
enum CRC32 {
    static func update(_ crc: UInt32, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> UInt32 {
        czlib_crc32(crc, bytes, count)
    }

    static func of(_ bytes: Bytes) -> UInt32 {
        guard let base = bytes.base.baseAddress else { return 0 }
        return update(0, base, bytes.count)
    }
}
