extension ImageInfo {
    /// WebP: the first chunk after the RIFF header (`VP8 `, `VP8L` or `VP8X`) gives the size.
    static func webp(_ b: Bytes) -> ImageInfo {
        if b.matches(Array("VP8 ".utf8), at: 12), b.matches([0x9D, 0x01, 0x2A], at: 23),
           let w = b.u16le(26), let h = b.u16le(28) {
            return ImageInfo(format: .webp, width: w & 0x3FFF, height: h & 0x3FFF)
        }
        if b.matches(Array("VP8L".utf8), at: 12), b.at(20) == 0x2F, let bits = b.u32le(21) {
            return ImageInfo(format: .webp, width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1)
        }
        if b.matches(Array("VP8X".utf8), at: 12), let w = b.u24le(24), let h = b.u24le(27) {
            return ImageInfo(format: .webp, width: w + 1, height: h + 1)
        }
        return ImageInfo(format: .webp)
    }
}
