extension ImageInfo {
    /// First IFD: ImageWidth (256) and ImageLength (257), SHORT or LONG.
    static func tiff(_ b: Bytes) -> ImageInfo {
        let little = b.at(0) == 0x49
        func u16(_ i: Int) -> Int? { little ? b.u16le(i) : b.u16be(i) }
        func u32(_ i: Int) -> Int? { little ? b.u32le(i) : b.u32be(i) }
        guard let ifd = u32(4), let count = u16(ifd) else { return ImageInfo(format: .tiff) }
        var width: Int?, height: Int?
        for n in 0..<min(count, FormatLimits.tiffSniffEntries) {
            let entry = ifd + 2 + n * 12
            guard let tag = u16(entry), let type = u16(entry + 2) else { break }
            let value = type == 3 ? u16(entry + 8) : type == 4 ? u32(entry + 8) : nil
            if tag == 256 { width = value } else if tag == 257 { height = value }
            if width != nil && height != nil { break }
        }
        return ImageInfo(format: .tiff, width: width, height: height)
    }

    /// BigTIFF: 8-byte offsets and counts, 20-byte directory entries.
    static func bigTIFF(_ b: Bytes) -> ImageInfo? {
        let little = b.at(0) == 0x49
        func u16(_ i: Int) -> Int? { little ? b.u16le(i) : b.u16be(i) }
        func u32(_ i: Int) -> Int? { little ? b.u32le(i) : b.u32be(i) }
        func u64(_ i: Int) -> Int? { little ? b.u64le(i) : b.u64be(i) }
        guard u16(4) == 8 else { return nil }
        guard let ifd = u64(8), ifd < Int.max / 2, let count = u64(ifd) else { return ImageInfo(format: .tiff) }
        var width: Int?, height: Int?
        for n in 0..<min(count, FormatLimits.tiffSniffEntries) {
            let entry = ifd + 8 + n * 20
            guard let tag = u16(entry), let type = u16(entry + 2) else { break }
            let value = type == 3 ? u16(entry + 12) : type == 4 ? u32(entry + 12) : type == 16 ? u64(entry + 12) : nil
            if tag == 256 { width = value } else if tag == 257 { height = value }
            if width != nil && height != nil { break }
        }
        return ImageInfo(format: .tiff, width: width, height: height)
    }
}
