extension ImageInfo {
    /// GIF87a or GIF89a: the logical screen's width and height follow the signature.
    static func gif(_ b: Bytes) -> ImageInfo {
        ImageInfo(format: .gif, width: b.u16le(6), height: b.u16le(8))
    }
}
