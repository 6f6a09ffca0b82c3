/// PNG: the signature, then chunks (length, type, data, CRC) to `IEND`.
/// Every chunk's CRC is checked as its bytes pass, so a flipped byte with the
/// right length is caught too.
struct PNGWalker: StructureWalker {
    private enum State { case signature, header, data, crc, done }
    private var state = State.signature
    private var type = ""
    private var ordinal = 0
    private var chunks = 0
    private var seen: [String: Int] = [:]

    mutating func start() -> WalkStep { .need(8) }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        switch state {
        case .signature:
            guard bytes.starts(with: ImageInfo.pngSignature) else { return .failed("not a PNG signature") }
            state = .header
            return .need(8)
        case .header:
            guard let length = bytes.u32be(0), length <= 0x7FFF_FFFF else {
                return .failed("PNG chunk \(chunks + 1) has an impossible length")
            }
            let typeBytes = Bytes(UnsafeBufferPointer(rebasing: bytes.base[4..<8]))
            type = String(decoding: typeBytes.base, as: UTF8.self)
            chunks += 1
            ordinal = (seen[type] ?? 0) + 1
            seen[type] = ordinal
            if chunks == 1 && type != "IHDR" { return .failed("PNG does not start with an IHDR chunk") }
            state = .data
            return .skip(Int64(length), crcSeed: CRC32.of(typeBytes))
        case .data:
            state = .crc
            return .need(4)
        case .crc:
            guard bytes.u32be(0) == Int(crc) else { return .failed("PNG \(name) fails its CRC check (damaged)") }
            if type == "IEND" { state = .done; return .end }
            state = .header
            return .need(8)
        case .done:
            return .end
        }
    }

    private var name: String { "\(type) chunk\(type == "IDAT" || ordinal > 1 ? " \(ordinal)" : "")" }

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
