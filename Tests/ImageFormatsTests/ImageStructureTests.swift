@testable import ImageFormats
import Testing
import TestSupport

/// The structure check on known vectors: where each format's image ends,
/// what a cut or a damaged body is told, and that trailing bytes pass.
@Suite struct ImageStructureTests {
    let h = ImageHeaderTests()

    /// The verdict on `bytes`, fed in pieces of `piece` bytes.
    func verdict(_ bytes: [UInt8], piece: Int = 5) -> ImageStructure.Verdict {
        var structure = ImageStructure()
        bytes.withUnsafeBytes { raw in
            var at = 0
            while at < raw.count {
                let size = min(piece, raw.count - at)
                structure.feed(UnsafeRawBufferPointer(rebasing: raw[at..<at + size]))
                at += size
            }
        }
        return structure.verdict
    }

    func problem(_ bytes: [UInt8]) -> String? {
        if case .broken(let message) = verdict(bytes) { return message }
        return nil
    }

    static let html = Array("<!DOCTYPE html><html><body><h1>404</h1></body></html>\n".utf8)

    @Test(arguments: ImageInfoTests.manifest.filter { $0.file != "images/truncated.png" })
    func everyWholeFixtureEndsWhereItsStructureDoes(row: ImageInfoTests.Row) {
        let bytes = ImageFixture.bytes(row.file)
        // An SVG ends with its root element's ">" (its last newline is trailing).
        let end = row.format == "svg" ? (bytes.lastIndex(of: UInt8(ascii: ">")) ?? 0) + 1 : bytes.count
        let expected: ImageStructure.Verdict = .complete(end: Int64(end))
        #expect(verdict(bytes) == expected)
        #expect(verdict(bytes, piece: 1) == expected, "one byte at a time")
        #expect(verdict(bytes + [UInt8](repeating: 0, count: 3000)) == expected, "zeros after the end")
        #expect(verdict(bytes + Self.html) == expected, "an HTML page after the end")
    }

    /// A body held whole is fed in one piece: the walker reads it in place (the signature and
    /// each header from the chunk itself, not from copies); the verdict is the same as in pieces,
    /// on whole, cut and damaged bodies.
    @Test(arguments: ImageInfoTests.manifest)
    func oneWholePieceReadsAsSmallPieces(row: ImageInfoTests.Row) {
        let bytes = ImageFixture.bytes(row.file)
        var bodies = [bytes, bytes + Self.html]
        for cut in [1, 15, 16, 17, 33, bytes.count / 2, bytes.count - 1] where cut < bytes.count {
            bodies.append(Array(bytes.prefix(cut)))
        }
        for at in [0, 8, 12, 20, 29, 33, 40, bytes.count / 3, bytes.count - 5] where at >= 0 && at < bytes.count {
            var damaged = bytes
            damaged[at] ^= 0x41
            bodies.append(damaged)
        }
        for body in bodies {
            let expected = verdict(body, piece: 1)
            for piece in [body.count, 5, 16, 17, 4096] where piece > 0 {
                #expect(verdict(body, piece: piece) == expected, "\(row.file): \(body.count) bytes in pieces of \(piece)")
            }
        }
    }

    /// The PNG walker fits an existential's inline buffer (three words): the structure check
    /// holds it without a heap box, and steps it without a uniqueness check per chunk.
    @Test func thePNGWalkerIsHeldInline() {
        #expect(MemoryLayout<PNGWalker>.size <= 3 * MemoryLayout<Int>.size)
    }

    @Test func theTruncatedFixtureIsCaught() {
        #expect(problem(ImageFixture.bytes("images/truncated.png")) == "PNG cut inside IDAT chunk 1")
    }

    @Test func png() {
        let png = ImageFixture.png
        #expect(problem(Array(png.dropLast(1))) == "PNG cut inside the CRC of IEND chunk")
        #expect(problem(Array(png.dropLast(12))) == "PNG cut before its IEND chunk (after IDAT chunk 1)")
        #expect(problem(Array(png.prefix(8))) == "PNG cut before its IHDR chunk")
        #expect(problem(png + [UInt8](repeating: 0x41, count: 2048)) == nil, "2 KiB after IEND")
        var flipped = png
        flipped[50] ^= 0x10   // inside the IDAT data: the length is right, the CRC is not
        #expect(problem(flipped) == "PNG IDAT chunk 1 fails its CRC check (damaged)")
        var badLength = png
        badLength[33] = 0xFF  // the second chunk's length: impossible
        #expect(problem(badLength) == "PNG chunk 2 has an impossible length")
    }

    /// A chunk's ordinal counts the chunks of its type before it, whether the type is one of PNG's
    /// own (counted without an array until it repeats) or not: `tEXt` thrice, `IDAT` twice, a private `prVt` twice.
    @Test func pngChunkOrdinalsCountEachType() {
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let body = Array(type.utf8) + data
            let crc = body.withUnsafeBufferPointer { CRC32.update(0, $0.baseAddress!, $0.count) }
            return [UInt8(data.count >> 24), UInt8(truncatingIfNeeded: data.count >> 16),
                    UInt8(truncatingIfNeeded: data.count >> 8), UInt8(truncatingIfNeeded: data.count)]
                + body + [UInt8(crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
        }
        let png = ImageFixture.png
        let head = Array(png.prefix(33)), rest = Array(png.dropFirst(33))   // the signature and IHDR; IDAT (one) and IEND
        let text = chunk("tEXt", Array("a\0b".utf8)), other = chunk("prVt", [1, 2])
        func damaged(_ chunk: [UInt8]) -> [UInt8] { chunk.dropLast() + [chunk.last! ^ 1] }
        #expect(problem(head + text + text + damaged(text) + rest) == "PNG tEXt chunk 3 fails its CRC check (damaged)")
        #expect(problem(head + text + damaged(text) + rest) == "PNG tEXt chunk 2 fails its CRC check (damaged)")
        #expect(problem(head + damaged(text) + rest) == "PNG tEXt chunk fails its CRC check (damaged)")
        #expect(problem(head + other + text + damaged(other) + rest) == "PNG prVt chunk 2 fails its CRC check (damaged)")
        #expect(problem(head + damaged(other) + rest) == "PNG prVt chunk fails its CRC check (damaged)")
        let idat = Array(rest.dropLast(12))
        #expect(problem(head + idat + text + damaged(idat) + rest) == "PNG IDAT chunk 2 fails its CRC check (damaged)")
        #expect(problem(head + idat + idat + text + Array(rest.prefix(20))) == "PNG cut inside IDAT chunk 3")
        #expect(problem(head + text + text + rest) == nil)
    }

    @Test func gif() {
        let gif = ImageFixture.bytes("images/anim-33x17.gif")
        #expect(problem(Array(gif.dropLast())) == "GIF cut before its trailer (after 2 images)")
        #expect(problem(Array(gif.prefix(11))) == "GIF cut inside its header")
        #expect(problem(gif + Array("garbage;\n".utf8)) == nil, "non-blank bytes after the trailer")
        #expect(problem(Array(gif.dropLast(5)))?.hasPrefix("GIF cut inside the data of image") == true)
    }

    /// SOI, DQT, SOF0, DHT, SOS, scan data with stuffing and restart markers, EOI.
    func jpeg(scan: [UInt8]) -> [UInt8] {
        let dqt: [UInt8] = [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)
        let sof: [UInt8] = [0xFF, 0xC0, 0x00, 0x0B, 8, 0, 16, 0, 16, 1, 1, 0x11, 0]
        let dht: [UInt8] = [0xFF, 0xC4, 0x00, 0x14, 0x00] + [UInt8](repeating: 0, count: 15) + [1, 0]
        let sos: [UInt8] = [0xFF, 0xDA, 0x00, 0x08, 1, 1, 0, 0, 63, 0]
        return [0xFF, 0xD8] + dqt + sof + dht + sos + scan + [0xFF, 0xD9]
    }

    @Test func jpegScansHonourStuffingAndRestartMarkers() {
        let scan: [UInt8] = [0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xFF, 0x00, 0xFF, 0xD7, 0x78]
        let image = jpeg(scan: scan)
        #expect(verdict(image) == .complete(end: Int64(image.count)))
        #expect(verdict(image, piece: 1) == .complete(end: Int64(image.count)), "a marker split across chunks")
        #expect(problem(Array(image.dropLast(2))) == "JPEG ends inside scan data (scan 1)")
        #expect(problem(Array(image.dropLast(4))) == "JPEG ends inside scan data (scan 1)", "cut after a restart marker")
        #expect(problem(Array(image.prefix(40))) == "JPEG cut inside its DQT segment")
        let headersOnly = Array(image.prefix(2 + 69 + 13 + 22))
        #expect(problem(headersOnly) == "JPEG cut before its image data (no start of scan)")
        #expect(problem(Array(image.prefix(2)) + [0xFF, 0xD9]) == "JPEG ends (EOI) before any image data")
    }

    @Test func jpegWithAppendedDataEndsAtEOI() {
        let photo = ImageFixture.jpeg
        #expect(problem(photo + [UInt8](repeating: 0, count: 4096)) == nil, "zeros")
        #expect(problem(photo + Self.html + Self.html) == nil, "HTML")
        // A motion photo: the MP4 follows EOI, nothing in the header announces it.
        let mp4 = h.box("ftyp", Array("mp42isom".utf8)) + h.box("mdat", [0xFF, 0xD8, 0xFF, 0xC0, 0xFF, 0xDA] + [UInt8](repeating: 0x42, count: 5000))
        #expect(verdict(photo + mp4) == .complete(end: Int64(photo.count)))
        #expect(problem(Array(ImageFixture.bytes("images/progressive-90x60.jpg").dropLast(30)))?
            .hasPrefix("JPEG ends inside scan data") == true)
    }

    @Test func webp() {
        let webp = ImageFixture.bytes("images/lossy-50x40.webp")
        #expect(problem(Array(webp.dropLast(10))) == "WebP cut at \(webp.count - 10) of \(webp.count) bytes (its RIFF size)")
        #expect(problem(webp + Self.html) == nil)
    }

    @Test func bmp() {
        let bmp = ImageFixture.bytes("images/bitmap-30x20.bmp")
        #expect(problem(Array(bmp.dropLast(1))) == "BMP cut inside its pixel data (\(bmp.count - 1) of \(bmp.count) bytes)")
        #expect(problem(Array(bmp.prefix(20))) == "BMP cut inside its header")
    }

    @Test func ico() {
        let ico = ImageFixture.bytes("images/favicon-16x16.ico")
        #expect(problem(Array(ico.dropLast(1))) == "ICO cut inside image 1 of 1")
    }

    @Test func tiffStripsMustLieInsideTheBody() {
        let tiff = ImageFixture.bytes("images/scan-25x35.tiff")
        #expect(problem(Array(tiff.dropLast(1)))?.hasPrefix("TIFF cut") == true)
        #expect(problem(Array(tiff.prefix(6))) == "TIFF cut inside its header")
    }

    /// A little-endian TIFF whose strip comes first and whose only directory lies past 64 KiB.
    func tiffWithDirectoryAt(_ offset: Int, width: Int, height: Int) -> [UInt8] {
        var bytes: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + h.le32(offset)
        bytes += [UInt8](repeating: 0x80, count: offset - 8)    // the strip: bytes 8 ..< offset
        func entry(_ tag: Int, _ type: Int, _ value: Int) -> [UInt8] { h.le16(tag) + h.le16(type) + h.le32(1) + h.le32(value) }
        bytes += h.le16(5) + entry(256, 4, width) + entry(257, 4, height) + entry(258, 3, 8)
            + entry(273, 4, 8) + entry(279, 4, offset - 8) + h.le32(0)
        return bytes
    }

    @Test func tiffSizeWhereverTheFirstDirectoryLies() throws {
        let tiff = tiffWithDirectoryAt(70_000, width: 350, height: 200)
        let head = Array(tiff.prefix(64 * 1024))
        let info = try #require(ImageInfo.sniff(head))
        #expect(info == ImageInfo(format: .tiff), "the head alone gives no size")
        var structure = ImageStructure()
        tiff.withUnsafeBytes { structure.feed($0) }
        #expect(structure.verdict == .complete(end: Int64(tiff.count)))
        #expect(info.completed(by: structure) == ImageInfo(format: .tiff, width: 350, height: 200))
        #expect(problem(Array(tiff.dropLast(3))) == "TIFF cut before or inside its directory 1")
    }

    @Test func avifAndHeif() {
        let avif = ImageFixture.bytes("images/photo-70x45.avif")
        #expect(problem(Array(avif.dropLast(1)))?.hasPrefix("AVIF/HEIF cut inside its mdat box") == true)
        #expect(problem(avif + Self.html) == nil)
        #expect(problem(Array(avif.prefix(100)))?.hasPrefix("AVIF/HEIF cut") == true)
    }

    /// A HEIF whose primary item has `ispe` 172×302, then `clap` 171×302, and optionally `irot` 90°.
    func heif(rotated: Bool) -> [UInt8] {
        let ftyp = h.box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))
        let ispe = h.fullBox("ispe", h.be32(172) + h.be32(302))
        // clap: width 171/1, height 302/1, horizontal offset -1/2, vertical 0/1 (what encoders write for an odd width)
        let clap = h.box("clap", h.be32(171) + h.be32(1) + h.be32(302) + h.be32(1) + [0xFF, 0xFF, 0xFF, 0xFF] + h.be32(2) + h.be32(0) + h.be32(1))
        let irot = h.box("irot", [1])
        let ipco = h.box("ipco", ispe + clap + irot)
        let ipma = h.fullBox("ipma", h.be32(1) + [0, 1] + (rotated ? [3, 0x81, 0x82, 0x83] : [2, 0x81, 0x82]))
        let meta = h.fullBox("meta", h.fullBox("pitm", [0, 1]) + h.box("iprp", ipco + ipma))
        return ftyp + meta + h.box("mdat", [1, 2, 3])
    }

    @Test func heifSizeAppliesCleanApertureAndRotationAsLibheif() {
        #expect(ImageInfo.sniff(heif(rotated: false)) == ImageInfo(format: .heif, width: 171, height: 302))
        #expect(ImageInfo.sniff(heif(rotated: true)) == ImageInfo(format: .heif, width: 302, height: 171))
    }

    @Test func heifEndsAfterEveryItemExtent() {
        let ftyp = h.box("ftyp", Array("avif".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8))
        let mdatStart = ftyp.count + 12 + 30 + 8    // ftyp, meta (full box header, iloc of 30 bytes), mdat header
        // iloc v0, offset_size 4, length_size 4, base_offset_size 0; 1 item, 1 extent at mdatStart of 6 bytes.
        let iloc = h.fullBox("iloc", [0x44, 0x00] + [0, 1] + [0, 1] + [0, 0] + [0, 1] + h.be32(mdatStart) + h.be32(6))
        let meta = h.fullBox("meta", iloc)
        let file = ftyp + meta + h.box("mdat", [1, 2, 3, 4, 5, 6])
        #expect(verdict(file) == .complete(end: Int64(file.count)))
        #expect(problem(Array(file.dropLast(1))) == "AVIF/HEIF cut inside its mdat box (\(file.count - 1) of \(file.count) bytes)")
        #expect(problem(ftyp + meta) == "AVIF/HEIF cut before the end of its item data (\(ftyp.count + meta.count) of \(file.count) bytes)")
        #expect(verdict(file + h.box("free", [0, 0])) == .complete(end: Int64(file.count)), "boxes after the end are trailing data")
    }

    static let jxlSignature: [UInt8] = [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]

    @Test func anImageSequenceWithoutItemsEndsWithItsMovieAndData() {
        let ftyp = h.box("ftyp", Array("avis".utf8) + [0, 0, 0, 0] + Array("avismsf1".utf8))
        let file = ftyp + h.box("moov", [UInt8](repeating: 1, count: 40)) + h.box("mdat", [UInt8](repeating: 2, count: 300))
        #expect(verdict(file + Self.html) == .complete(end: Int64(file.count)))
        #expect(problem(Array(file.dropLast(1)))?.hasPrefix("AVIF/HEIF cut inside its mdat box") == true)
    }

    @Test func jpegXL() {
        let bare = ImageFixture.bytes("images/still-36x28.jxl")
        #expect(problem(Array(bare.dropLast(5))) == "JPEG XL cut inside the data of frame 1")
        #expect(problem(Array(bare.prefix(4))) == "JPEG XL cut inside its headers")
        #expect(verdict(bare + Self.html, piece: 1) == .complete(end: Int64(bare.count)), "the TOC gives the frame's end")
        let container = Self.jxlSignature + h.box("ftyp", Array("jxl ".utf8) + [0, 0, 0, 0] + Array("jxl ".utf8))
            + h.box("jxlc", bare)
        #expect(verdict(container + Self.html) == .complete(end: Int64(container.count)))
        #expect(problem(Array(container.dropLast(1))) == "JPEG XL cut inside its jxlc box (\(container.count - 1) of \(container.count) bytes)")
        let parts = Self.jxlSignature + h.box("jxlp", h.be32(0) + Array(bare.prefix(50)))
            + h.box("jxlp", h.be32(0x8000_0001) + Array(bare.dropFirst(50)))
        #expect(verdict(parts) == .complete(end: Int64(parts.count)))
        #expect(problem(Array(parts.dropLast(1)))?.hasPrefix("JPEG XL cut inside its jxlp box") == true)
    }

    @Test func jpegXLWithAnEmbeddedICCProfilePassesUndecided() {
        var w = ImageHeaderTests.Bits()
        w.put(1, 1); w.put(3, 5); w.put(1, 3)               // SizeHeader: small, 32 high, 1:1
        w.put(0, 1); w.put(0, 1)                            // ImageMetadata: not all default, no extra fields
        w.put(0, 1); w.put(0, 2)                            // bit depth: integer, 8 bits
        w.put(1, 1); w.put(0, 2); w.put(1, 1)               // 16-bit buffers, no extra channels, XYB
        w.put(0, 1); w.put(1, 1)                            // colour encoding: not all default, want_icc
        let codestream = [0xFF, 0x0A] + w.bytes + [UInt8](repeating: 0x55, count: 100)
        #expect(ImageInfo.sniff(codestream) == ImageInfo(format: .jxl, width: 32, height: 32))
        #expect(verdict(codestream) == .undecided, "the profile is entropy-coded: no cheap way to its end")
    }

    @Test func svgEndsWhereItsRootElementCloses() {
        let svg = Array("""
            <?xml version="1.0"?>
            <!-- </svg> in a comment -->
            <!DOCTYPE svg [ <!ENTITY a "b"> ]>
            <svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" data-x='>'>
            <svg x="1"><rect/></svg><![CDATA[ </svg> ]]><text>a &lt; b</text>
            </svg>
            """.utf8)
        #expect(verdict(svg) == .complete(end: Int64(svg.count)))
        #expect(verdict(svg + Array("\n<p>trailing</p>".utf8)) == .complete(end: Int64(svg.count)))
        #expect(problem(Array(svg.dropLast(2))) == "SVG cut inside a tag")
        #expect(problem(Array(svg.dropLast(7))) == "SVG cut before its root element closes (1 open)")
        #expect(problem(Array(svg.prefix(30))) == "SVG cut inside a comment")
        #expect(verdict(Array("<svg width='3' height='4'/>".utf8)) == .complete(end: 27), "a self-closed root")
        #expect(verdict(Array("<html><body>".utf8) + [UInt8](repeating: 0x41, count: 5000)) == .undecided,
                "another root element: not walked (the sniff rejects the body)")
        #expect(verdict(Array("<svgx>".utf8)) == .undecided)
    }

    /// The driver reads each chunk in place: a step with a negative length (a
    /// walker's arithmetic on body bytes gone wrong) is a broken structure,
    /// never a trap or a read before the chunk; a `need` past the gather
    /// limit passes undecided. Before, `need(-1)` trapped in the slice.
    @Test func aNegativeLengthFromAWalkerIsABrokenStructure() {
        for step in [WalkStep.need(-1), .need(Int.min), .skip(-1, crcSeed: nil), .skip(Int64.min, crcSeed: 0)] {
            guard case .failed(let message) = ImageStructure.checked(step) else {
                Issue.record("\(step) must fail")
                continue
            }
            #expect(message.hasPrefix("the structure gives a negative length ("), "\(message)")
        }
        guard case .undecidable = ImageStructure.checked(.need(FormatLimits.gatherBytes + 1)) else {
            Issue.record("a need past the gather limit passes undecided")
            return
        }
        guard case .need(0) = ImageStructure.checked(.need(0)), case .skip(0, nil) = ImageStructure.checked(.skip(0, crcSeed: nil)),
              case .need(FormatLimits.gatherBytes) = ImageStructure.checked(.need(FormatLimits.gatherBytes)) else {
            Issue.record("lengths from 0 to the limit are followed as given")
            return
        }
    }
}
