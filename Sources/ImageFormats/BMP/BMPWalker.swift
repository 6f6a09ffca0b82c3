/// BMP: the pixel data starts at the header's offset and is as long as the
/// DIB header implies (rows padded to 4 bytes × height for uncompressed
/// data, the header's image size for RLE and embedded JPEG/PNG). The file
/// size field is unreliable in practice (often 0 or wrong) and serves only
/// when nothing else gives the length.
struct BMPWalker: StructureWalker {
    private enum State { case core, info, pixels }
    private var state = State.core
    private var header: [UInt8] = []
    private var end: Int64 = 0

    mutating func start() -> WalkStep { .need(26) }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        switch state {
        case .core:
            guard bytes.starts(with: Array("BM".utf8)), let dibSize = bytes.u32le(14) else { return .failed("not a BMP header") }
            header = bytes.slice(0, bytes.count)
            if dibSize == 12 { return pixels() }
            guard dibSize >= 40 else { return .failed("BMP has an unknown header size (\(dibSize))") }
            state = .info
            return .need(54 - 26)
        case .info:
            header += bytes.slice(0, bytes.count)
            return pixels()
        case .pixels:
            return .end
        }
    }

    private mutating func pixels() -> WalkStep {
        state = .pixels
        return header.withUnsafeBufferPointer { buffer -> WalkStep in
            let b = Bytes(buffer)
            guard let fileSize = b.u32le(2), let dataOffset = b.u32le(10) else { return .undecidable }
            let width: Int64, height: Int64, bits: Int64, compression: Int, imageSize: Int64
            if b.count < 54 {
                guard let w = b.u16le(18), let h = b.u16le(20), let bpp = b.u16le(24) else { return .undecidable }
                (width, height, bits, compression, imageSize) = (Int64(w), Int64(h), Int64(bpp), 0, 0)
            } else {
                guard let w = b.i32le(18), let h = b.i32le(22), let bpp = b.u16le(28),
                      let c = b.u32le(30), let s = b.u32le(34) else { return .undecidable }
                (width, height, bits, compression, imageSize) = (Int64(w.magnitude), Int64(h.magnitude), Int64(bpp), c, Int64(s))
            }
            let length: Int64
            if [0, 3, 6].contains(compression) {   // BI_RGB, BI_BITFIELDS, BI_ALPHABITFIELDS: rows of 32-bit words
                guard width < FormatLimits.bmpSide, height < FormatLimits.bmpSide, bits <= FormatLimits.bmpBitsPerPixel else { return .failed("BMP has an impossible size") }
                length = (width * bits + 31) / 32 * 4 * height
            } else if imageSize > 0 {
                length = imageSize
            } else if fileSize > dataOffset {
                length = Int64(fileSize - dataOffset)
            } else {
                return .undecidable
            }
            end = Int64(dataOffset) + length
            return .skip(max(0, end - Int64(b.count)), crcSeed: nil)
        }
    }

    func missing(length: Int64) -> String {
        state == .pixels ? "BMP cut inside its pixel data (\(length) of \(end) bytes)" : "BMP cut inside its header"
    }
}
