/// An image's format and pixel size, read from the first bytes of its body
/// (magic bytes, then the format's header). Never reads past the bytes it
/// is given: every read goes through `Bytes`, which bounds-checks.
///
/// Formats (SPEC §5): PNG, JPEG, GIF, WebP, BMP, TIFF (and BigTIFF), ICO,
/// AVIF/HEIF, JPEG XL and SVG. The size is nil when the header does not give
/// it within the bytes read (e.g. a TIFF whose directory sits at the end).
public struct ImageInfo: Sendable, Equatable {
    public let format: ImageFormat
    public let width: Int?
    public let height: Int?

    public init(format: ImageFormat, width: Int? = nil, height: Int? = nil) {
        self.format = format
        self.width = width
        self.height = height
    }

    /// nil when the bytes are not one of the image formats SPEC §5 names.
    public static func sniff(_ bytes: [UInt8]) -> ImageInfo? {
        bytes.withUnsafeBufferPointer { sniff(Bytes($0)) }
    }

    /// The same, over borrowed memory (a mapped file, a buffer being filled).
    /// Reads nothing outside `buffer`.
    public static func sniff(_ buffer: UnsafeBufferPointer<UInt8>) -> ImageInfo? {
        sniff(Bytes(buffer))
    }

    /// The magic bytes choose the format; its own file (`PNG/ImageInfo+PNG.swift`, …) reads the header.
    static func sniff(_ b: Bytes) -> ImageInfo? {
        if b.starts(with: pngSignature) { return png(b) }
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return jpeg(b) }
        if b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) { return gif(b) }
        if b.starts(with: Array("RIFF".utf8)) && b.matches(Array("WEBP".utf8), at: 8) { return webp(b) }
        if b.starts(with: Array("BM".utf8)) { return bmp(b) }
        if b.starts(with: [0x49, 0x49, 0x2A, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return tiff(b) }
        if b.starts(with: [0x49, 0x49, 0x2B, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2B]) { return bigTIFF(b) }
        if b.starts(with: [0x00, 0x00, 0x01, 0x00]) { return ico(b) }
        if b.matches(Array("ftyp".utf8), at: 4) { return isobmff(b) }
        if b.starts(with: [0xFF, 0x0A]) || b.starts(with: jxlContainerSignature) { return jpegXL(b) }
        return SVGSniffer.sniff(b)
    }
}
