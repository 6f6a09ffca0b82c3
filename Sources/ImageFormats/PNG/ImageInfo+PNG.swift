/// PNG: the signature, then the `IHDR` chunk with width and height.
extension ImageInfo {
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func png(_ b: Bytes) -> ImageInfo {
        // The type as one big-endian word (`PNGWalker.ihdr`): `Array("IHDR".utf8)` made an array per download.
        guard b.u32be(12) == Int(PNGWalker.ihdr) else { return ImageInfo(format: .png) }
        return ImageInfo(format: .png, width: b.u32be(16), height: b.u32be(20))
    }
}
