/// JPEG XL: a bare codestream (`FF 0A`) or an ISO BMFF container (`JXL `
/// signature box, then `jxlc` or `jxlp` boxes holding the codestream). The
/// size is the codestream's SizeHeader (ISO/IEC 18181-1 §D.2), which
/// follows the two signature bytes, read as little-endian bit fields.
extension ImageInfo {
    static let jxlContainerSignature: [UInt8] = [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    static func jpegXL(_ b: Bytes) -> ImageInfo {
        var codestream = 0
        if b.starts(with: jxlContainerSignature) {
            let boxes = boxes(b, from: 0, to: b.count)
            if let jxlc = boxes.first(where: { $0.type == "jxlc" }) {
                codestream = jxlc.start
            } else if let jxlp = boxes.first(where: { $0.type == "jxlp" }) {
                codestream = jxlp.start + 4   // a 4-byte part index precedes the bytes
            } else {
                return ImageInfo(format: "jxl")
            }
        }
        guard b.matches([0xFF, 0x0A], at: codestream) else { return ImageInfo(format: "jxl") }
        var bits = BitReader(b, offset: codestream + 2)
        guard let size = sizeHeader(&bits) else { return ImageInfo(format: "jxl") }
        return ImageInfo(format: "jxl", width: size.width, height: size.height)
    }

    /// Width and height from the SizeHeader bundle; nil if the bytes run out.
    static func sizeHeader(_ bits: inout BitReader) -> (width: Int, height: Int)? {
        func u32() -> Int? {   // U32(1 + u(9), 1 + u(13), 1 + u(18), 1 + u(30))
            guard let selector = bits.read(2) else { return nil }
            return bits.read([9, 13, 18, 30][selector]).map { $0 + 1 }
        }
        guard let small = bits.read(1) else { return nil }
        let height: Int
        if small == 1 {
            guard let h = bits.read(5) else { return nil }
            height = (h + 1) * 8
        } else {
            guard let h = u32() else { return nil }
            height = h
        }
        guard let ratio = bits.read(3) else { return nil }
        if ratio != 0 {
            let (numerator, denominator) = [(1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1)][ratio - 1]
            return (height * numerator / denominator, height)
        }
        if small == 1 {
            guard let w = bits.read(5) else { return nil }
            return ((w + 1) * 8, height)
        }
        guard let width = u32() else { return nil }
        return (width, height)
    }
}

/// Reads bit fields least-significant bit first (JPEG XL's order), never
/// past the end of the bytes.
struct BitReader {
    private let bytes: Bytes
    private var position: Int   // in bits

    init(_ bytes: Bytes, offset: Int) {
        self.bytes = bytes
        position = max(0, offset) * 8
    }

    /// The next `count` (at most 32) bits as an unsigned value, or nil at the end.
    mutating func read(_ count: Int) -> Int? {
        guard count >= 0, count <= 32 else { return nil }
        var value = 0
        for k in 0..<count {
            guard let byte = bytes.at((position + k) / 8) else { return nil }
            value |= Int((byte >> UInt8((position + k) % 8)) & 1) << k
        }
        position += count
        return value
    }
}
