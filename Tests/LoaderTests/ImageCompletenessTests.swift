import Loader
import Testing

/// The tail check: clearly truncated images are caught, whole ones (with or
/// without trailing bytes) pass.
@Suite struct ImageCompletenessTests {
    func problem(_ bytes: [UInt8]) -> String? {
        guard let info = ImageInfo.sniff(Array(bytes.prefix(64 * 1024))) else { return "not an image" }
        return ImageCompleteness.problem(format: info.format, head: Array(bytes.prefix(64 * 1024)),
                                         tail: Array(bytes.suffix(ImageCompleteness.tailLength)), length: Int64(bytes.count))
    }

    @Test(arguments: ImageInfoTests.manifest.filter { $0.file != "images/truncated.png" })
    func everyWholeFixturePasses(row: ImageInfoTests.Row) {
        #expect(problem(LoaderHarness.fixture(row.file)) == nil)
    }

    @Test func theTruncatedFixtureIsCaught() {
        #expect(problem(LoaderHarness.fixture("images/truncated.png")) == "truncated PNG (no IEND chunk)")
    }

    @Test func png() {
        let png = LoaderHarness.png
        #expect(problem(Array(png.dropLast(1))) == "truncated PNG (no IEND chunk)")
        #expect(problem(png + Array("trailing comment\n".utf8)) == nil)
    }

    @Test func gif() {
        let gif = LoaderHarness.fixture("images/anim-33x17.gif")
        #expect(problem(Array(gif.dropLast())) == "truncated GIF (no trailer)")
        #expect(problem(gif + [0x0A, 0x00, 0x00]) == nil, "padding after the trailer")
    }

    @Test func jpeg() {
        let jpeg = LoaderHarness.jpeg
        #expect(problem(Array(jpeg.dropLast(2))) == "truncated JPEG (no EOI marker)")
        #expect(problem(Array(jpeg.dropLast(40))) == "truncated JPEG (no EOI marker)")
        #expect(problem(jpeg + [UInt8](repeating: 0, count: 300)) == nil, "zero padding after EOI")
        #expect(problem(Array(jpeg.prefix(200))) == nil, "cut inside the tables: not clearly a cut scan, left alone")
        // Data appended after EOI that cannot be scan data (0xFF followed by a marker byte): left alone.
        let appended: [UInt8] = (0..<700).flatMap { _ -> [UInt8] in Array("mdat".utf8) + [0xFF, 0xFE, 0x12, 0x34] }
        #expect(problem(jpeg + [0x00, 0x00, 0x00, 0x18] + Array("ftypmp42".utf8) + appended) == nil)
        // A long scan without an end, and a motion photo (declares appended video) with one.
        let long = Array(jpeg.dropLast(2)) + [UInt8](repeating: 0x42, count: 5000)
        #expect(problem(long) == "truncated JPEG (no EOI marker)")
        let xmp = [0xFF, 0xE1, 0x00, 0x16] + Array("GCamera:MotionPhoto1".utf8)
        #expect(problem(Array(jpeg.prefix(2)) + xmp + Array(long.dropFirst(2))) == nil)
    }

    @Test func webp() {
        let webp = LoaderHarness.fixture("images/lossy-50x40.webp")
        #expect(problem(Array(webp.dropLast(10))) == "truncated WebP (\(webp.count - 10) of \(webp.count) bytes)")
        #expect(problem(webp + [0, 0]) == nil)
    }

    @Test func formatsWithoutACheapEndCheckPass() {
        for file in ["images/scan-25x35.tiff", "images/photo-70x45.avif", "images/still-36x28.jxl", "images/vector-200x100.svg"] {
            #expect(problem(Array(LoaderHarness.fixture(file).dropLast(20))) == nil, "\(file)")
        }
    }
}
