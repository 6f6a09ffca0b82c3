import Foundation
import ImageFormats
import Testing
import TestSupport

/// The module's entry point for someone who only wants "is this body a
/// complete image, and what is it?", and the typed format it answers with.
@Suite struct ImageInspectionTests {
    @Test func theReadmeSnippetAnswersForAWholeImage() throws {
        // The README's five lines, on a fixture.
        let body = [UInt8](FileManager.default.contents(atPath: Paths.fixtures + "/images/red-64x48.png") ?? Data())
        let inspection = ImageFormats.inspect(body)
        let image = try #require(inspection.image)
        #expect("\(image.format.name) \(image.width ?? 0) \(image.height ?? 0)" == "png 64 48")
        #expect(inspection == .image(ImageInfo(format: .png, width: 64, height: 48), end: Int64(body.count)))
        #expect(inspection.problem == nil)
    }

    @Test func trailingBytesAreNotTheImagesAndTheEndSaysWhereItStops() {
        let png = ImageFixture.png
        #expect(ImageFormats.inspect(png + Array("<html>".utf8)) == .image(ImageInfo(format: .png, width: 64, height: 48),
                                                                           end: Int64(png.count)))
    }

    @Test func aCutImageIsBrokenAndSaysWhatIsMissing() {
        let inspection = ImageFormats.inspect(ImageFixture.bytes("images/truncated.png"))
        #expect(inspection.image == nil)
        #expect(inspection.problem == "PNG cut inside IDAT chunk 1")
        if case .broken(let info, _) = inspection { #expect(info.format == .png) } else { Issue.record("not broken: \(inspection)") }
    }

    @Test func textIsNotAnImage() {
        #expect(ImageFormats.inspect(Array("<html><body>Not Found</body></html>".utf8)) == .notAnImage)
        #expect(ImageFormats.inspect([]) == .empty && ImageFormats.inspect([]).problem == "the body is empty")
        #expect(ImageFormats.inspect(Array("<html>".utf8)).problem == "the body is in no supported image format")
    }

    @Test func theStreamingCheckGivesTheSameAnswerChunkByChunk() {
        let jpeg = ImageFixture.jpeg
        var structure = ImageStructure()
        jpeg.withUnsafeBytes { raw in
            for start in stride(from: 0, to: raw.count, by: 7) {
                structure.feed(UnsafeRawBufferPointer(rebasing: raw[start..<min(start + 7, raw.count)]))
            }
        }
        #expect(structure.inspection(head: Array(jpeg.prefix(4096))) == ImageFormats.inspect(jpeg))
    }

    @Test func everyFormatHasTheNameOutputPrintsItsExtensionAndMediaType() {
        #expect(ImageFormat.all.map(\.name) == ["png", "jpeg", "gif", "webp", "bmp", "tiff", "ico", "avif", "heif", "jxl", "svg"])
        #expect(ImageFormat.jpeg.fileExtension == "jpg")
        #expect(ImageFormat.all.filter { $0.fileExtension != $0.name } == [.jpeg], "only JPEG's extension differs from its name")
        #expect(ImageFormat.svg.mediaType == "image/svg+xml" && ImageFormat.png.mediaType == "image/png")
        #expect(ImageFormat.all.allSatisfy { $0.mediaType.hasPrefix("image/") })
        #expect(ImageFormat(name: "jpeg") == .jpeg && ImageFormat(name: "jpg") == nil && ImageFormat(name: "") == nil)
    }

    @Test func everyFixtureIsInspectedAsTheImageTheManifestSays() {
        for row in ImageFixture.manifest where row.file != "images/truncated.png" {
            let image = ImageFormats.inspect(ImageFixture.bytes(row.file)).image
            #expect(image?.format.name == row.format && image?.width == row.width && image?.height == row.height, "\(row.file)")
        }
    }

    /// Swift 6: a structure fed on one task is the result of that task
    /// (this did not compile while `ImageStructure` was not `Sendable`).
    @Test func aStructureFedOnAnotherTaskIsItsResult() async {
        let png = ImageFixture.png
        let fed = await Task.detached { () -> ImageStructure in
            var structure = ImageStructure()
            png.withUnsafeBytes { structure.feed($0) }
            return structure
        }.value
        #expect(fed.inspection(head: png) == ImageFormats.inspect(png))
        #expect(fed.verdict == .complete(end: Int64(png.count)))
    }
}
