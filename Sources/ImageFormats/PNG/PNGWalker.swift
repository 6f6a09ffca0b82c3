/// PNG: the signature, then chunks (length, type, data, CRC) to `IEND`.
/// Every chunk's CRC is checked as its bytes pass, so a flipped byte with the
/// right length is caught too.
struct PNGWalker: StructureWalker {
    private enum State { case signature, header, data, crc, done }
    private var state = State.signature
    /// The current chunk's type (four ASCII bytes, big-endian) and its ordinal among chunks of that type.
    /// The counts are 32-bit (saturating: only messages read them) so that the walker fits an
    /// existential's inline buffer (24 bytes): `ImageStructure` holds it without a box, and
    /// advances it without checking that box's uniqueness each step.
    private var type: UInt32 = 0
    private var ordinal: Int32 = 0
    private var chunks: Int32 = 0
    /// Chunks seen per type: a handful of types, so a short list beats a dictionary (no allocation per chunk).
    private var seen: [(type: UInt32, count: Int)] = []
    static let ihdr: UInt32 = 0x4948_4452, idat: UInt32 = 0x4944_4154, iend: UInt32 = 0x4945_4E44

    mutating func start() -> WalkStep { .need(8) }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        switch state {
        case .signature:
            guard bytes.starts(with: ImageInfo.pngSignature) else { return .failed("not a PNG signature") }
            state = .header
            return .need(8)
        case .header:
            guard let length = bytes.u32be(0), length <= 0x7FFF_FFFF else {
                return .failed("PNG chunk \(Int(chunks) + 1) has an impossible length")
            }
            let typeBytes = Bytes(UnsafeBufferPointer(rebasing: bytes.base[4..<8]))
            type = UInt32(bytes.u32be(4) ?? 0)
            if chunks < .max { chunks += 1 }
            if let k = seen.firstIndex(where: { $0.type == type }) {
                seen[k].count += 1
                ordinal = Int32(clamping: seen[k].count)
            } else {
                if seen.isEmpty { seen.reserveCapacity(8) }   // one allocation, not one per growth (a PNG has 3 types or more)
                seen.append((type, 1))
                ordinal = 1
            }
            if chunks == 1 && type != Self.ihdr { return .failed("PNG does not start with an IHDR chunk") }
            state = .data
            return .skip(Int64(length), crcSeed: CRC32.of(typeBytes))
        case .data:
            state = .crc
            return .need(4)
        case .crc:
            guard bytes.u32be(0) == Int(crc) else { return .failed("PNG \(name) fails its CRC check (damaged)") }
            if type == Self.iend { state = .done; return .end }
            state = .header
            return .need(8)
        case .done:
            return .end
        }
    }

    private var name: String {
        let letters = (0..<4).map { UInt8(truncatingIfNeeded: type >> (24 - 8 * $0)) }
        return "\(String(decoding: letters, as: UTF8.self)) chunk\(type == Self.idat || ordinal > 1 ? " \(ordinal)" : "")"
    }

    func missing(length: Int64) -> String {
        switch state {
        case .signature: return "PNG cut inside its signature"
        case .header: return chunks == 0 ? "PNG cut before its IHDR chunk" : "PNG cut before its IEND chunk (after \(name))"
        case .data: return "PNG cut inside \(name)"
        case .crc: return "PNG cut inside the CRC of \(name)"
        case .done: return ""
        }
    }
}
