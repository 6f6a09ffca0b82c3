/// JPEG XL: a bare codestream (`FF 0A`) or an ISO BMFF container (`JXL `
/// signature box, then `jxlc` or `jxlp` boxes holding the codestream). The
/// size is the codestream's SizeHeader (ISO/IEC 18181-1 §D.2), which
/// follows the two signature bytes, read by `JXLHeaders.size`, the same
/// reader the structure walk uses.
extension ImageInfo {
    static let jxlContainerSignature: [UInt8] = [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    static func jpegXL(_ b: Bytes) -> ImageInfo {
        var codestream = 0
        if b.starts(with: jxlContainerSignature) {
            let boxes = Box.boxes(b, from: 0, to: b.count)
            if let jxlc = boxes.first(where: { $0.type == "jxlc" }) {
                codestream = jxlc.start
            } else if let jxlp = boxes.first(where: { $0.type == "jxlp" }) {
                codestream = jxlp.start + 4   // a 4-byte part index precedes the bytes
            } else {
                return ImageInfo(format: .jxl)
            }
        }
        guard b.matches([0xFF, 0x0A], at: codestream) else { return ImageInfo(format: .jxl) }
        var bits = JXLBits(b.dropFirst(codestream + 2))
        guard let size = try? JXLHeaders.size(&bits) else { return ImageInfo(format: .jxl) }
        return ImageInfo(format: .jxl, width: size.width, height: size.height)
    }
}
