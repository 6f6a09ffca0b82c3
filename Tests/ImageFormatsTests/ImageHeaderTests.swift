import ImageFormats
import Testing
import TestSupport

/// Header variants the fixtures do not cover, built byte by byte.
@Suite struct ImageHeaderTests {
    static let jpeg = ImageFixture.jpeg
    static let jxl = ImageFixture.bytes("images/still-36x28.jxl")

    func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
    func box(_ type: String, _ content: [UInt8]) -> [UInt8] { be32(8 + content.count) + Array(type.utf8) + content }
    func fullBox(_ type: String, _ content: [UInt8]) -> [UInt8] { box(type, [0, 0, 0, 0] + content) }

    @Test func jpegSkipsAnyNumberOfAPPnSegmentsIncludingOnesThatLookLikeFrames() throws {
        // An APP1 whose payload contains a fake SOF0 for 16x16 (an EXIF thumbnail would).
        let fakeFrame: [UInt8] = [0xFF, 0xC0, 0x00, 0x11, 0x08, 0x00, 0x10, 0x00, 0x10, 0x03]
        var segments: [UInt8] = []
        for n in 0..<12 {
            let payload = Array("Exif\u{0}\u{0}".utf8) + fakeFrame + [UInt8](repeating: UInt8(n), count: 40)
            segments += [0xFF, 0xE0 + UInt8(n % 16)] + [UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        }
        let bytes = Array(Self.jpeg.prefix(2)) + segments + Array(Self.jpeg.dropFirst(2))
        #expect(ImageInfo.sniff(bytes) == ImageInfo(format: .jpeg, width: 120, height: 80))
        // A head that ends before the frame header: still a JPEG, size unknown.
        #expect(ImageInfo.sniff(Array(bytes.prefix(300))) == ImageInfo(format: .jpeg))
    }

    @Test func jpegXLInsideTheISOBMFFContainer() throws {
        let signature: [UInt8] = [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]
        let ftyp = box("ftyp", Array("jxl ".utf8) + [0, 0, 0, 0] + Array("jxl ".utf8))
        let jxlc = signature + ftyp + box("jxll", [5]) + box("jxlc", Self.jxl)
        #expect(ImageInfo.sniff(jxlc) == ImageInfo(format: .jxl, width: 36, height: 28))
        let jxlp = signature + ftyp + box("jxlp", [0, 0, 0, 0] + Array(Self.jxl.prefix(20)))
        #expect(ImageInfo.sniff(jxlp) == ImageInfo(format: .jxl, width: 36, height: 28))
        #expect(ImageInfo.sniff(signature + ftyp) == ImageInfo(format: .jxl))
    }

    /// Writes JPEG XL bit fields, least significant bit first.
    struct Bits {
        var bytes: [UInt8] = []
        var count = 0
        mutating func put(_ value: Int, _ n: Int) {
            for k in 0..<n {
                if count % 8 == 0 { bytes.append(0) }
                bytes[bytes.count - 1] |= UInt8((value >> k) & 1) << UInt8(count % 8)
                count += 1
            }
        }
    }

    @Test func jpegXLSizeHeaderSmallAndRatioForms() throws {
        var small = Bits()
        small.put(1, 1); small.put(48 / 8 - 1, 5); small.put(0, 3); small.put(64 / 8 - 1, 5)
        #expect(ImageInfo.sniff([0xFF, 0x0A] + small.bytes + [0, 0]) == ImageInfo(format: .jxl, width: 64, height: 48))
        var ratio = Bits()
        ratio.put(0, 1); ratio.put(1, 2); ratio.put(900 - 1, 13); ratio.put(5, 3)   // 16:9
        #expect(ImageInfo.sniff([0xFF, 0x0A] + ratio.bytes + [0, 0]) == ImageInfo(format: .jxl, width: 1600, height: 900))
        var large = Bits()
        large.put(0, 1); large.put(3, 2); large.put(100_000 - 1, 30); large.put(0, 3); large.put(2, 2); large.put(70_000 - 1, 18)
        #expect(ImageInfo.sniff([0xFF, 0x0A] + large.bytes) == ImageInfo(format: .jxl, width: 70_000, height: 100_000))
        #expect(ImageInfo.sniff([0xFF, 0x0A, 0x00]) == ImageInfo(format: .jxl), "cut short: format only")
    }

    /// A HEIF/AVIF whose primary item is a grid: the first `ispe` is a tile's.
    func isobmff(major: String, compatible: [String], tile: (Int, Int), image: (Int, Int)) -> [UInt8] {
        let ftyp = box("ftyp", Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) })
        let ispeTile = fullBox("ispe", be32(tile.0) + be32(tile.1))
        let ispeImage = fullBox("ispe", be32(image.0) + be32(image.1))
        let ipco = box("ipco", ispeTile + ispeImage)
        // ipma: 2 entries; item 2 (tile) → property 1, item 1 (grid) → property 2.
        let ipma = fullBox("ipma", be32(2) + [0, 2, 1, 0x81] + [0, 1, 1, 0x82])
        let pitm = fullBox("pitm", [0, 1])
        let meta = fullBox("meta", fullBox("hdlr", [0, 0, 0, 0] + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
                           + pitm + box("iprp", ipco + ipma))
        return ftyp + meta + box("mdat", [1, 2, 3])
    }

    @Test func avifAndHeifReportThePrimaryItemsSizeAndTheirBrand() throws {
        let avif = isobmff(major: "mif1", compatible: ["mif1", "avif", "miaf"], tile: (512, 512), image: (1024, 768))
        #expect(ImageInfo.sniff(avif) == ImageInfo(format: .avif, width: 1024, height: 768))
        let heic = isobmff(major: "heic", compatible: ["mif1", "heic"], tile: (256, 256), image: (4032, 3024))
        #expect(ImageInfo.sniff(heic) == ImageInfo(format: .heif, width: 4032, height: 3024))
        let video = box("ftyp", Array("isom".utf8) + [0, 0, 2, 0] + Array("isomiso2mp41".utf8)) + box("moov", [])
        #expect(ImageInfo.sniff(video) == nil, "an MP4 video is not an image")
    }

    @Test func tiffBothByteOrdersAndBigTIFF() throws {
        // Big-endian classic TIFF: IFD at 8 with ImageWidth (SHORT) and ImageLength (LONG).
        let mm: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A] + be32(8) + [0, 2]
            + [1, 0, 0, 3] + be32(1) + [0x01, 0x2C, 0, 0]
            + [1, 1, 0, 4] + be32(1) + be32(200) + be32(0)
        #expect(ImageInfo.sniff(mm) == ImageInfo(format: .tiff, width: 300, height: 200))
        var big: [UInt8] = [0x49, 0x49, 0x2B, 0x00, 0x08, 0x00, 0x00, 0x00] + le32(16) + le32(0)
        big += le32(2) + le32(0)
        big += le16(256) + le16(3) + le32(1) + le32(0) + le16(640) + [0, 0, 0, 0, 0, 0]
        big += le16(257) + le16(16) + le32(1) + le32(0) + le32(480) + le32(0)
        #expect(ImageInfo.sniff(big) == ImageInfo(format: .tiff, width: 640, height: 480))
        #expect(ImageInfo.sniff([0x49, 0x49, 0x2A, 0x00] + le32(100_000)) == ImageInfo(format: .tiff),
                "a directory past the head: format only")
    }

    @Test func bmpVariantsAndTextThatStartsWithBM() throws {
        let core: [UInt8] = Array("BM".utf8) + le32(26 + 6) + le32(0) + le32(26) + le32(12) + le16(3) + le16(2) + le16(1) + le16(24)
        #expect(ImageInfo.sniff(core) == ImageInfo(format: .bmp, width: 3, height: 2))
        let topDown: [UInt8] = Array("BM".utf8) + le32(0) + le32(0) + le32(54) + le32(40) + le32(7) + le32(-5 & 0xFFFF_FFFF) + le16(1) + le16(32)
        #expect(ImageInfo.sniff(topDown) == ImageInfo(format: .bmp, width: 7, height: 5))
        #expect(ImageInfo.sniff(Array("BMW owners club: meeting notes, twenty-six bytes at least.".utf8)) == nil)
    }

    @Test func icoNeedsAPlausibleDirectory() throws {
        let ico = ImageFixture.bytes("images/favicon-16x16.ico")
        #expect(ImageInfo.sniff(ico)?.format == .ico)
        #expect(ImageInfo.sniff([0, 0, 1, 0, 1, 0] + [UInt8](repeating: 0x41, count: 40)) == nil)
        #expect(ImageInfo.sniff([0, 0, 1, 0, 0, 0] + [UInt8](repeating: 0, count: 40)) == nil, "no entries")
        var two = [UInt8]([0, 0, 1, 0, 2, 0])
        two += [16, 16, 0, 0] + le16(1) + le16(32) + le32(100) + le32(38)
        two += [0, 0, 0, 0] + le16(1) + le16(32) + le32(100) + le32(138)
        #expect(ImageInfo.sniff(two) == ImageInfo(format: .ico, width: 256, height: 256), "0 means 256; the largest wins")
    }

    @Test func gifVersionsAndSVGForms() throws {
        #expect(ImageInfo.sniff(Array("GIF87a".utf8) + le16(10) + le16(20) + [0, 0, 0]) == ImageInfo(format: .gif, width: 10, height: 20))
        let svg = "\u{FEFF}<?xml version=\"1.0\"?>\n<!-- a comment > with a bracket -->\n<!DOCTYPE svg>\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 30.4 12\">"
        #expect(ImageInfo.sniff(Array(svg.utf8)) == ImageInfo(format: .svg, width: 30, height: 12))
        #expect(ImageInfo.sniff(Array("<svg width='5px' height=\"7\"/>".utf8)) == ImageInfo(format: .svg, width: 5, height: 7))
        #expect(ImageInfo.sniff(Array("<svg width=\"50%\">".utf8)) == ImageInfo(format: .svg))
        #expect(ImageInfo.sniff(Array("<svgfoo>".utf8)) == nil)
        #expect(ImageInfo.sniff(Array("<html><svg width=\"5\"/></html>".utf8)) == nil)
    }
}
