import ImageFormats
import Testing
import TestSupport

/// Sizes that claim more than the body holds (issue 23 items 2 and 3): an
/// ISO BMFF box past the end of its body or of the box around it, at any
/// depth; a WebP whose RIFF size is smaller than its chunks. The body was
/// cut, or its sizes lie: either way it is not a whole image.
@Suite struct SizeClaimTests {
    let h = ImageHeaderTests()

    static let html = Array("<html><body>Not Found</body></html>\n".utf8)

    func inspect(_ bytes: [UInt8]) -> ImageInspection { ImageFormats.inspect(bytes) }

    // MARK: - ISO BMFF

    func be64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) } }

    /// `box` with its 32-bit size replaced by `size`.
    func claiming(_ box: [UInt8], _ size: UInt32) -> [UInt8] { h.be32(Int(size)) + box.dropFirst(4) }

    /// `box` rewritten with size 1 and a 64-bit largesize of `large`.
    func largeSized(_ box: [UInt8], _ large: UInt64) -> [UInt8] { h.be32(1) + Array(box[4..<8]) + be64(large) + box.dropFirst(8) }

    /// An AVIF whose `meta` box (depth 1) or `iprp` box inside it (depth 2)
    /// or `ipco` inside that (depth 3) is rewritten by `lie`.
    func avif(lyingAt depth: Int, _ lie: ([UInt8]) -> [UInt8] = { $0 }) -> [UInt8] {
        let ftyp = h.box("ftyp", Array("avif".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8))
        let ispe = h.fullBox("ispe", h.be32(70) + h.be32(45))
        var ipco = h.box("ipco", ispe)
        if depth == 3 { ipco = lie(ipco) }
        let ipma = h.fullBox("ipma", h.be32(1) + [0, 1] + [1, 0x81])
        var iprp = h.box("iprp", ipco + ipma)
        if depth == 2 { iprp = lie(iprp) }
        var meta = h.fullBox("meta", h.fullBox("pitm", [0, 1]) + iprp)
        if depth == 1 { meta = lie(meta) }
        return ftyp + meta + h.box("mdat", [1, 2, 3])
    }

    @Test func anHonestAVIFIsWhole() {
        let file = avif(lyingAt: 0)
        // No `iloc`: the image ends with its meta box; the mdat box after it is trailing.
        #expect(inspect(file) == .image(ImageInfo(format: .avif, width: 70, height: 45), end: Int64(file.count - 11)))
    }

    @Test(arguments: [1, 2, 3])
    func aBoxClaimingFourGigabytesAtAnyDepthIsACut(depth: Int) {
        let file = avif(lyingAt: depth) { claiming($0, 0xFFFF_FFFF) }
        let problem = inspect(file).problem
        #expect(problem != nil && inspect(file).image == nil, "depth \(depth): \(inspect(file))")
        if depth == 1 {
            #expect(problem?.hasPrefix("AVIF/HEIF cut inside its meta box (\(file.count) of ") == true, "\(problem ?? "")")
        } else {
            let parent = depth == 2 ? "meta" : "iprp", child = depth == 2 ? "iprp" : "ipco"
            #expect(problem?.hasPrefix("AVIF/HEIF cut: its \(child) box claims more bytes than the \(parent) box around it holds") == true,
                    "\(problem ?? "")")
        }
        #expect(inspect(file + Self.html + [UInt8](repeating: 0, count: 5000)).image == nil, "bytes after it do not make it whole")
    }

    @Test(arguments: [1, 2, 3])
    func aLargesizeOfTwoToTheSixtyFourMinusOneAtAnyDepthIsACut(depth: Int) {
        let honest = avif(lyingAt: depth) { largeSized($0, UInt64($0.count + 8)) }
        #expect(inspect(honest) == .image(ImageInfo(format: .avif, width: 70, height: 45), end: Int64(honest.count - 11)),
                "a truthful largesize is read")
        let file = avif(lyingAt: depth) { largeSized($0, .max) }
        #expect(inspect(file).image == nil && inspect(file).problem?.hasPrefix("AVIF/HEIF cut") == true, "depth \(depth): \(inspect(file))")
    }

    @Test func aSizeOneByteTooLargeInsideMetaIsACutToo() {
        let file = avif(lyingAt: 2) { box in claiming(box, UInt32(box.count + 1)) }
        #expect(inspect(file).problem?.hasPrefix("AVIF/HEIF cut: its iprp box claims more bytes") == true, "\(inspect(file))")
    }

    // MARK: - WebP

    /// `webp` with its RIFF size replaced by `size`.
    func riffSized(_ webp: [UInt8], _ size: Int) -> [UInt8] { Array(webp.prefix(4)) + h.le32(size) + webp.dropFirst(8) }

    @Test func aRIFFSizeOfEightHoldsNoImage() {
        let webp = ImageFixture.bytes("images/lossy-50x40.webp")
        #expect(webp.count == 150)
        let lie = riffSized(webp, 8)
        #expect(inspect(lie).problem == "WebP holds no whole image inside its RIFF size (16 bytes)")
        #expect(inspect(lie + Self.html).image == nil)
    }

    @Test func aRIFFSizeThatCutsTheImageChunkIsNotAnImage() {
        let webp = ImageFixture.bytes("images/lossy-50x40.webp")
        for size in [4, 12, 20, 100, 141] {
            #expect(inspect(riffSized(webp, size)).problem == "WebP holds no whole image inside its RIFF size (\(8 + size) bytes)",
                    "RIFF size \(size)")
        }
        #expect(inspect(riffSized(webp, 142)) == .image(ImageInfo(format: .webp, width: 50, height: 40), end: 150))
    }

    @Test func anExtendedWebPNeedsItsImageChunkInsideTheRIFFSize() {
        let webp = ImageFixture.bytes("images/alpha-77x31.webp")   // VP8X 10, ALPH 39, VP8 116
        #expect(inspect(webp) == .image(ImageInfo(format: .webp, width: 77, height: 31), end: Int64(webp.count)))
        let vp8xAndAlpha = 4 + (8 + 10) + (8 + 40)
        #expect(inspect(riffSized(webp, vp8xAndAlpha)).problem == "WebP holds no whole image inside its RIFF size (\(8 + vp8xAndAlpha) bytes)")
        #expect(inspect(riffSized(webp, vp8xAndAlpha + 8 + 115)).problem != nil, "one byte short of the VP8 chunk")
    }

    @Test func anOddRIFFSizeEndsTheStructureBeforeThePadByte() {
        let webp = ImageFixture.bytes("images/lossless-41x23.webp")   // VP8L of 45 bytes, padded: RIFF size 58
        #expect(webp.count == 66)
        let info = ImageInfo(format: .webp, width: 41, height: 23)
        let odd = riffSized(webp, 57)                                   // the size without the pad byte
        #expect(inspect(Array(odd.dropLast())) == .image(info, end: 65), "the pad byte may be missing")
        #expect(inspect(odd) == .image(info, end: 65), "a pad byte after an odd size is a trailing byte")
        #expect(inspect(odd + Self.html) == .image(info, end: 65))
        #expect(inspect(riffSized(webp, 55)).problem == "WebP holds no whole image inside its RIFF size (63 bytes)")
        #expect(inspect(Array(odd.prefix(60))).problem == "WebP cut at 60 of 65 bytes (its RIFF size)")
    }

    @Test func bytesAfterTheRIFFsEndAreTrailingBytes() {
        let webp = ImageFixture.bytes("images/lossy-50x40.webp")
        let trailing = webp + h.box("VP8 ", [UInt8](repeating: 7, count: 30))
        #expect(inspect(trailing) == .image(ImageInfo(format: .webp, width: 50, height: 40), end: 150))
        #expect(inspect(Array(webp.dropLast(10))).problem == "WebP cut at 140 of 150 bytes (its RIFF size)")
    }
}
