/// JPEG XL's bit fields over gathered bytes: least-significant bit first,
/// with the codestream's composite encodings (U32, U64, Enum). Running out
/// of bytes throws `needMore`, so a walker can wait for the next chunk (and
/// the header sniff, which has all the bytes it will get, gives up). The
/// only bit reader: the sniff and the structure walk share it.
struct JXLBits {
    private let bytes: Bytes
    private(set) var position = 0   // in bits

    init(_ bytes: Bytes) { self.bytes = bytes }

    /// Whole bytes consumed (after `alignToByte`).
    var byteOffset: Int { (position + 7) / 8 }

    /// The next `count` (at most 32) bits.
    mutating func u(_ count: Int) throws(JXLHeaders.Stop) -> Int {
        guard count > 0 else { return 0 }
        guard position + count <= bytes.count * 8 else { throw .needMore }
        var value = 0
        for k in 0..<count {
            let bit = position + k
            value |= Int((bytes.base[bit >> 3] >> UInt8(bit & 7)) & 1) << k
        }
        position += count
        return value
    }

    mutating func bool() throws(JXLHeaders.Stop) -> Bool { try u(1) == 1 }

    mutating func skip(_ count: Int) throws(JXLHeaders.Stop) {
        guard count >= 0, count <= bytes.count * 8 - position else { throw .needMore }
        position += count
    }

    /// U32: a 2-bit selector picks one of four (offset, bit count) pairs.
    mutating func u32(_ d0: (Int, Int), _ d1: (Int, Int), _ d2: (Int, Int), _ d3: (Int, Int)) throws(JXLHeaders.Stop) -> Int {
        let (offset, count) = [d0, d1, d2, d3][try u(2)]
        return offset + (try u(count))
    }

    /// U64: 0, 1–16, 17–272, or 12 bits then 8-bit groups while a continuation bit is set.
    mutating func u64() throws(JXLHeaders.Stop) -> UInt64 {
        switch try u(2) {
        case 0: return 0
        case 1: return 1 + UInt64(try u(4))
        case 2: return 17 + UInt64(try u(8))
        default:
            var value = UInt64(try u(12))
            var shift: UInt64 = 12
            while shift < 64, try bool() {
                value |= UInt64(try u(shift < 56 ? 8 : Int(64 - shift))) << shift
                shift += 8
            }
            return value
        }
    }

    mutating func enumeration() throws(JXLHeaders.Stop) -> Int { try u32((0, 0), (1, 0), (2, 4), (18, 6)) }

    /// ZeroPadToByte.
    mutating func alignToByte() throws(JXLHeaders.Stop) { try skip((8 - position % 8) % 8) }
}
