/// PNG: the signature, then chunks (length, type, data, CRC) to `IEND`.
/// Every chunk's CRC is checked as its bytes pass, so a flipped byte with the
/// right length is caught too.
struct PNGWalker: StructureWalker {
    private enum State { case signature, header, data, crc, done }
    private var state = State.signature
    /// The current chunk's type (four ASCII bytes, big-endian). The walker fits an existential's
    /// inline buffer (24 bytes): `ImageStructure` holds it without a box, and advances it without
    /// checking that box's uniqueness each step.
    private var type: UInt32 = 0
    /// Chunks so far (32-bit, saturating: only messages and the IHDR check read it).
    private var chunks: Int32 = 0
    /// One bit per type of `knownBit` seen once or more: a usual PNG (IHDR, one IDAT, IEND, a
    /// few ancillary chunks) is counted here, with no allocation per walk (an array was made for
    /// every PNG, ~0.5 k instructions a cold URL with its free).
    private var seenOnce: UInt32 = 0
    /// Chunks seen per type for the others: a type of `knownBit` seen again (its count
    /// from 2), and every type not among them. Empty for a usual PNG.
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
            count(type)
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

    /// Counts one more chunk of `type`.
    private mutating func count(_ type: UInt32) {
        if let bit = Self.knownBit(type), seenOnce & bit == 0 {
            seenOnce |= bit
        } else if let k = seen.firstIndex(where: { $0.type == type }) {
            seen[k].count += 1
        } else {
            if seen.isEmpty { seen.reserveCapacity(8) }   // one allocation, not one per growth
            seen.append((type, Self.knownBit(type) == nil ? 1 : 2))
        }
    }

    /// The current chunk's ordinal among the chunks of its type (saturating: only messages read it).
    private var ordinal: Int32 {
        if let k = seen.firstIndex(where: { $0.type == type }) { return Int32(clamping: seen[k].count) }
        return 1
    }

    /// The chunk types of PNG 3 (and APNG's) whose first chunk is counted in `seenOnce`, each its bit.
    private static func knownBit(_ type: UInt32) -> UInt32? {
        let index: UInt32
        switch type {
        case ihdr: index = 0
        case idat: index = 1
        case iend: index = 2
        case 0x504C_5445: index = 3    // PLTE
        case 0x7452_4E53: index = 4    // tRNS
        case 0x6348_524D: index = 5    // cHRM
        case 0x6741_4D41: index = 6    // gAMA
        case 0x6943_4350: index = 7    // iCCP
        case 0x7342_4954: index = 8    // sBIT
        case 0x7352_4742: index = 9    // sRGB
        case 0x6349_4350: index = 10   // cICP
        case 0x6D44_4356: index = 11   // mDCV
        case 0x634C_4C49: index = 12   // cLLI
        case 0x7445_5874: index = 13   // tEXt
        case 0x7A54_5874: index = 14   // zTXt
        case 0x6954_5874: index = 15   // iTXt
        case 0x624B_4744: index = 16   // bKGD
        case 0x6849_5354: index = 17   // hIST
        case 0x7048_5973: index = 18   // pHYs
        case 0x7350_4C54: index = 19   // sPLT
        case 0x6558_4966: index = 20   // eXIf
        case 0x7449_4D45: index = 21   // tIME
        case 0x6163_544C: index = 22   // acTL
        case 0x6663_544C: index = 23   // fcTL
        case 0x6664_4154: index = 24   // fdAT
        default: return nil
        }
        return 1 << index
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
