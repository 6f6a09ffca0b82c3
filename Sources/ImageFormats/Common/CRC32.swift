import CCRC

/// CRC-32 as PNG uses it (ISO 3309), from ISA-L, which folds with
/// PCLMULQDQ: a 10 MiB PNG costs about 0.4 ms (zlib's `crc32`: 2.6 ms).
enum CRC32 {
    static func update(_ crc: UInt32, _ bytes: UnsafePointer<UInt8>, _ count: Int) -> UInt32 {
        ccrc_crc32(crc, bytes, count)
    }

    static func of(_ bytes: Bytes) -> UInt32 {
        guard let base = bytes.base.baseAddress else { return 0 }
        return update(0, base, bytes.count)
    }
}
