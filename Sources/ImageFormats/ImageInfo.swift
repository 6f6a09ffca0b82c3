/// An image's format and pixel size, read from the first bytes of its body
/// (magic bytes, then the format's header). Never reads past the bytes it
/// is given: every read goes through `Bytes`, which bounds-checks.
///
/// Formats (SPEC §5): PNG, JPEG, GIF, WebP, BMP, TIFF (and BigTIFF), ICO,
/// AVIF/HEIF, JPEG XL and SVG. The size is nil when the header does not give
/// it within the bytes read (e.g. a TIFF whose directory sits at the end).
public struct ImageInfo: Sendable, Equatable {
    public let format: String
    public let width: Int?
    public let height: Int?

    public init(format: String, width: Int? = nil, height: Int? = nil) {
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

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func sniff(_ b: Bytes) -> ImageInfo? {
        if b.starts(with: pngSignature) { return png(b) }
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return jpeg(b) }
        if b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) {
            return ImageInfo(format: "gif", width: b.u16le(6), height: b.u16le(8))
        }
        if b.starts(with: Array("RIFF".utf8)) && b.matches(Array("WEBP".utf8), at: 8) { return webp(b) }
        if b.starts(with: Array("BM".utf8)) { return bmp(b) }
        if b.starts(with: [0x49, 0x49, 0x2A, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return tiff(b) }
        if b.starts(with: [0x49, 0x49, 0x2B, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2B]) { return bigTIFF(b) }
        if b.starts(with: [0x00, 0x00, 0x01, 0x00]) { return ico(b) }
        if b.matches(Array("ftyp".utf8), at: 4) { return isobmff(b) }
        if b.starts(with: [0xFF, 0x0A]) || b.starts(with: jxlContainerSignature) { return jpegXL(b) }
        return SVGSniffer.sniff(b)
    }

    private static func png(_ b: Bytes) -> ImageInfo {
        guard b.matches(Array("IHDR".utf8), at: 12) else { return ImageInfo(format: "png") }
        return ImageInfo(format: "png", width: b.u32be(16), height: b.u32be(20))
    }

    /// Walks the marker segments (any number of APPn, tables, …) to the first
    /// SOFn; stops at the start of scan, since the frame header precedes it.
    private static func jpeg(_ b: Bytes) -> ImageInfo {
        var i = 2
        while let byte = b.at(i), let marker = b.at(i + 1) {
            guard byte == 0xFF else { i += 1; continue }                     // tolerate junk between segments
            if marker == 0xFF { i += 1; continue }                            // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }
            if marker == 0xD9 || marker == 0xDA { break }                     // end of image / start of scan
            guard let length = b.u16be(i + 2), length >= 2 else { break }
            let isSOF = (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
            if isSOF {
                return ImageInfo(format: "jpeg", width: b.u16be(i + 7), height: b.u16be(i + 5))
            }
            i += 2 + length
        }
        return ImageInfo(format: "jpeg")
    }

    private static func webp(_ b: Bytes) -> ImageInfo {
        if b.matches(Array("VP8 ".utf8), at: 12), b.matches([0x9D, 0x01, 0x2A], at: 23),
           let w = b.u16le(26), let h = b.u16le(28) {
            return ImageInfo(format: "webp", width: w & 0x3FFF, height: h & 0x3FFF)
        }
        if b.matches(Array("VP8L".utf8), at: 12), b.at(20) == 0x2F, let bits = b.u32le(21) {
            return ImageInfo(format: "webp", width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1)
        }
        if b.matches(Array("VP8X".utf8), at: 12), let w = b.u24le(24), let h = b.u24le(27) {
            return ImageInfo(format: "webp", width: w + 1, height: h + 1)
        }
        return ImageInfo(format: "webp")
    }

    /// "BM" alone is too weak (a text may start with it): the DIB header must
    /// have one of the sizes the format defines and one colour plane.
    private static func bmp(_ b: Bytes) -> ImageInfo? {
        guard let headerSize = b.u32le(14) else { return nil }
        if headerSize == 12 {
            guard b.u16le(22) == 1 else { return nil }
            return ImageInfo(format: "bmp", width: b.u16le(18), height: b.u16le(20))
        }
        guard [16, 40, 52, 56, 64, 108, 124].contains(headerSize), b.u16le(26) == 1,
              let w = b.i32le(18), let h = b.i32le(22) else { return nil }
        return ImageInfo(format: "bmp", width: Int(w.magnitude), height: Int(h.magnitude))   // negative height: top-down
    }

    /// First IFD: ImageWidth (256) and ImageLength (257), SHORT or LONG.
    private static func tiff(_ b: Bytes) -> ImageInfo {
        let little = b.at(0) == 0x49
        func u16(_ i: Int) -> Int? { little ? b.u16le(i) : b.u16be(i) }
        func u32(_ i: Int) -> Int? { little ? b.u32le(i) : b.u32be(i) }
        guard let ifd = u32(4), let count = u16(ifd) else { return ImageInfo(format: "tiff") }
        var width: Int?, height: Int?
        for n in 0..<min(count, 1024) {
            let entry = ifd + 2 + n * 12
            guard let tag = u16(entry), let type = u16(entry + 2) else { break }
            let value = type == 3 ? u16(entry + 8) : type == 4 ? u32(entry + 8) : nil
            if tag == 256 { width = value } else if tag == 257 { height = value }
            if width != nil && height != nil { break }
        }
        return ImageInfo(format: "tiff", width: width, height: height)
    }

    /// BigTIFF: 8-byte offsets and counts, 20-byte directory entries.
    private static func bigTIFF(_ b: Bytes) -> ImageInfo? {
        let little = b.at(0) == 0x49
        func u16(_ i: Int) -> Int? { little ? b.u16le(i) : b.u16be(i) }
        func u32(_ i: Int) -> Int? { little ? b.u32le(i) : b.u32be(i) }
        func u64(_ i: Int) -> Int? { little ? b.u64le(i) : b.u64be(i) }
        guard u16(4) == 8 else { return nil }
        guard let ifd = u64(8), ifd < Int.max / 2, let count = u64(ifd) else { return ImageInfo(format: "tiff") }
        var width: Int?, height: Int?
        for n in 0..<min(count, 1024) {
            let entry = ifd + 8 + n * 20
            guard let tag = u16(entry), let type = u16(entry + 2) else { break }
            let value = type == 3 ? u16(entry + 12) : type == 4 ? u32(entry + 12) : type == 16 ? u64(entry + 12) : nil
            if tag == 256 { width = value } else if tag == 257 { height = value }
            if width != nil && height != nil { break }
        }
        return ImageInfo(format: "tiff", width: width, height: height)
    }

    /// ICO: the largest entry of the directory (0 means 256). "00 00 01 00"
    /// is a weak signature, so the first entry must be plausible too.
    private static func ico(_ b: Bytes) -> ImageInfo? {
        guard let count = b.u16le(4), count > 0 else { return nil }
        guard let firstSize = b.u32le(6 + 8), firstSize > 0,
              let firstOffset = b.u32le(6 + 12), firstOffset >= 6 + 16 * count,
              let planes = b.u16le(6 + 4), planes <= 1 else { return nil }
        var best: (w: Int, h: Int)?
        for n in 0..<min(count, 256) {
            let entry = 6 + n * 16
            guard let rawW = b.at(entry), let rawH = b.at(entry + 1) else { break }
            let w = rawW == 0 ? 256 : Int(rawW), h = rawH == 0 ? 256 : Int(rawH)
            if let current = best, current.w * current.h >= w * h { continue }
            best = (w, h)
        }
        return ImageInfo(format: "ico", width: best?.w, height: best?.h)
    }
}
