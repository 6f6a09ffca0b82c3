extension ImageInfo {
    /// "BM" alone is too weak (a text may start with it): the DIB header must
    /// have one of the sizes the format defines and one colour plane.
    static func bmp(_ b: Bytes) -> ImageInfo? {
        guard let headerSize = b.u32le(14) else { return nil }
        if headerSize == 12 {
            guard b.u16le(22) == 1 else { return nil }
            return ImageInfo(format: .bmp, width: b.u16le(18), height: b.u16le(20))
        }
        guard [16, 40, 52, 56, 64, 108, 124].contains(headerSize), b.u16le(26) == 1,
              let w = b.i32le(18), let h = b.i32le(22) else { return nil }
        return ImageInfo(format: .bmp, width: Int(w.magnitude), height: Int(h.magnitude))   // negative height: top-down
    }
}
