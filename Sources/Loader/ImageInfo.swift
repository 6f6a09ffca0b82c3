/// An image's format and pixel size, read from the first bytes of its body
/// (magic bytes, then the format's header). Never reads past `bytes`.
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

    static func sniff(_ b: Bytes) -> ImageInfo? {
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return png(b) }
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return jpeg(b) }
        if b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) {
            return ImageInfo(format: "gif", width: b.u16le(6), height: b.u16le(8))
        }
        if b.starts(with: Array("RIFF".utf8)) && b.matches(Array("WEBP".utf8), at: 8) { return webp(b) }
        if b.starts(with: Array("BM".utf8)) && b.count >= 26 { return bmp(b) }
        if b.starts(with: [0x49, 0x49, 0x2A, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return tiff(b) }
        if b.starts(with: [0x00, 0x00, 0x01, 0x00]) && b.count >= 22 && (b.u16le(4) ?? 0) > 0 { return ico(b) }
        if b.matches(Array("ftyp".utf8), at: 4) { return isobmff(b) }
        if b.starts(with: [0xFF, 0x0A]) || b.starts(with: [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) {
            return ImageInfo(format: "jxl")
        }
        return SVGSniffer.sniff(b)
    }

    private static func png(_ b: Bytes) -> ImageInfo {
        guard b.matches(Array("IHDR".utf8), at: 12) else { return ImageInfo(format: "png") }
        return ImageInfo(format: "png", width: b.u32be(16), height: b.u32be(20))
    }

    /// Walks the marker segments (any number of APPn, tables, …) to the first SOFn.
    private static func jpeg(_ b: Bytes) -> ImageInfo {
        var i = 2
        while i + 4 <= b.count {
            guard b[i] == 0xFF else { i += 1; continue }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }                    // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }
            if marker == 0xD9 || marker == 0xDA { break }             // end of image / start of scan
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
        if b.matches(Array("VP8 ".utf8), at: 12), b.count >= 30, b[23] == 0x9D, b[24] == 0x01, b[25] == 0x2A,
           let w = b.u16le(26), let h = b.u16le(28) {
            return ImageInfo(format: "webp", width: w & 0x3FFF, height: h & 0x3FFF)
        }
        if b.matches(Array("VP8L".utf8), at: 12), b.count >= 25, b[20] == 0x2F {
            let bits = UInt32(b[21]) | UInt32(b[22]) << 8 | UInt32(b[23]) << 16 | UInt32(b[24]) << 24
            return ImageInfo(format: "webp", width: Int(bits & 0x3FFF) + 1, height: Int((bits >> 14) & 0x3FFF) + 1)
        }
        if b.matches(Array("VP8X".utf8), at: 12), let w = b.u24le(24), let h = b.u24le(27) {
            return ImageInfo(format: "webp", width: w + 1, height: h + 1)
        }
        return ImageInfo(format: "webp")
    }

    private static func bmp(_ b: Bytes) -> ImageInfo {
        guard let headerSize = b.u32le(14) else { return ImageInfo(format: "bmp") }
        if headerSize == 12 {
            return ImageInfo(format: "bmp", width: b.u16le(18), height: b.u16le(20))
        }
        guard let w = b.i32le(18), let h = b.i32le(22) else { return ImageInfo(format: "bmp") }
        return ImageInfo(format: "bmp", width: Int(w.magnitude), height: Int(h.magnitude))
    }

    /// First IFD: ImageWidth (256) and ImageLength (257), SHORT or LONG.
    private static func tiff(_ b: Bytes) -> ImageInfo {
        let little = b[0] == 0x49
        func u16(_ i: Int) -> Int? { little ? b.u16le(i) : b.u16be(i) }
        func u32(_ i: Int) -> Int? { little ? b.u32le(i) : b.u32be(i) }
        guard let ifd = u32(4), let count = u16(ifd) else { return ImageInfo(format: "tiff") }
        var width: Int?, height: Int?
        for n in 0..<min(count, 512) {
            let entry = ifd + 2 + n * 12
            guard let tag = u16(entry), let type = u16(entry + 2) else { break }
            let value = type == 3 ? u16(entry + 8) : type == 4 ? u32(entry + 8) : nil
            if tag == 256 { width = value } else if tag == 257 { height = value }
            if width != nil && height != nil { break }
        }
        return ImageInfo(format: "tiff", width: width, height: height)
    }

    /// Largest entry of the directory; 0 means 256.
    private static func ico(_ b: Bytes) -> ImageInfo {
        let count = b.u16le(4) ?? 0
        var best: (Int, Int)?
        for n in 0..<min(count, 256) {
            let entry = 6 + n * 16
            guard entry + 2 <= b.count else { break }
            let w = b[entry] == 0 ? 256 : Int(b[entry]), h = b[entry + 1] == 0 ? 256 : Int(b[entry + 1])
            if best == nil || w * h > best!.0 * best!.1 { best = (w, h) }
        }
        return ImageInfo(format: "ico", width: best?.0, height: best?.1)
    }

    /// AVIF and HEIF: brand in `ftyp`, size from the first `ispe` box found.
    private static func isobmff(_ b: Bytes) -> ImageInfo? {
        guard b.count >= 12 else { return nil }
        let brand = String(decoding: b.slice(8, 4), as: UTF8.self)
        let avif = ["avif", "avis"]
        let heif = ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"]
        let format: String
        if avif.contains(brand) { format = "avif" } else if heif.contains(brand) { format = "heif" } else { return nil }
        let ispe = Array("ispe".utf8)
        var i = 12
        while i + 16 <= b.count {
            if b.matches(ispe, at: i) {
                return ImageInfo(format: format, width: b.u32be(i + 8), height: b.u32be(i + 12))
            }
            i += 1
        }
        return ImageInfo(format: format)
    }
}

/// Bounds-checked reads over a borrowed buffer: every accessor returns nil
/// instead of reading past the end.
struct Bytes {
    let base: UnsafeBufferPointer<UInt8>
    init(_ base: UnsafeBufferPointer<UInt8>) { self.base = base }
    var count: Int { base.count }
    subscript(i: Int) -> UInt8 { base[i] }
    func starts(with prefix: [UInt8]) -> Bool { matches(prefix, at: 0) }
    func matches(_ bytes: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset + bytes.count <= count else { return false }
        for (k, byte) in bytes.enumerated() where base[offset + k] != byte { return false }
        return true
    }
    func slice(_ offset: Int, _ length: Int) -> [UInt8] {
        guard offset >= 0, length >= 0, offset + length <= count else { return [] }
        return Array(base[offset..<offset + length])
    }
    func u16be(_ i: Int) -> Int? { i >= 0 && i + 2 <= count ? Int(base[i]) << 8 | Int(base[i + 1]) : nil }
    func u16le(_ i: Int) -> Int? { i >= 0 && i + 2 <= count ? Int(base[i + 1]) << 8 | Int(base[i]) : nil }
    func u24le(_ i: Int) -> Int? {
        i >= 0 && i + 3 <= count ? Int(base[i]) | Int(base[i + 1]) << 8 | Int(base[i + 2]) << 16 : nil
    }
    func u32be(_ i: Int) -> Int? {
        i >= 0 && i + 4 <= count ? Int(base[i]) << 24 | Int(base[i + 1]) << 16 | Int(base[i + 2]) << 8 | Int(base[i + 3]) : nil
    }
    func u32le(_ i: Int) -> Int? {
        i >= 0 && i + 4 <= count ? Int(base[i + 3]) << 24 | Int(base[i + 2]) << 16 | Int(base[i + 1]) << 8 | Int(base[i]) : nil
    }
    func i32le(_ i: Int) -> Int32? { u32le(i).map { Int32(truncatingIfNeeded: $0) } }
}
