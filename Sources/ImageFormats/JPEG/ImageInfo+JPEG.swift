extension ImageInfo {
    /// Walks the marker segments (any number of APPn, tables, …) to the first
    /// SOFn; stops at the start of scan, since the frame header precedes it.
    static func jpeg(_ b: Bytes) -> ImageInfo {
        var i = 2
        while let byte = b.at(i), let marker = b.at(i + 1) {
            guard byte == 0xFF else { i += 1; continue }                     // tolerate junk between segments
            if marker == 0xFF { i += 1; continue }                            // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }
            if marker == 0xD9 || marker == 0xDA { break }                     // end of image / start of scan
            guard let length = b.u16be(i + 2), length >= 2 else { break }
            if JPEGWalker.isFrameHeader(marker) {
                return ImageInfo(format: .jpeg, width: b.u16be(i + 7), height: b.u16be(i + 5))
            }
            i += 2 + length
        }
        return ImageInfo(format: .jpeg)
    }
}
