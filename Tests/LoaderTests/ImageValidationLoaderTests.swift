import DiskCache
import Fetch
import Foundation
import ImageFormats
import Loader
import TestSupport
import Testing

/// Only images are stored (unless `acceptAnyContent`), and only whole ones.
@Suite struct ImageValidationLoaderTests {
    @Test(arguments: ImageFixture.manifest.filter { $0.file != "images/truncated.png" })
    func everyFixtureIsStoredWithItsFormatAndSize(row: ImageFixture) async throws {
        let h = try LoaderHarness()
        h.server.serveDirectory(Paths.fixtures)
        let result = try #require(await h.load("/" + row.file).result)
        #expect(result.format?.name == row.format && result.width == row.width && result.height == row.height)
        let stored = try #require(try h.entry("/" + row.file))
        #expect(stored.metadata.format == row.format && stored.metadata.width == row.width)
        #expect(try Data(contentsOf: URL(fileURLWithPath: stored.bodyPath))
                == Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/" + row.file)))
    }

    @Test func htmlIsNotAnImageAndIsNotStoredUnlessAnyContentIsAccepted() async throws {
        let h = try LoaderHarness()
        h.server.serveDirectory(Paths.fixtures)
        let error = try #require(await h.load("/not-an-image.html").error)
        #expect(error.kind == .notAnImage && error.message.contains("text/html"))
        #expect(try h.entry("/not-an-image.html") == nil)
        #expect(h.temporaryFiles.isEmpty)
        let any = try #require(await h.load("/not-an-image.html") { $0.acceptAnyContent = true }.result)
        #expect(any.format == nil && any.contentType?.hasPrefix("text/html") == true)
        #expect(try h.entry("/not-an-image.html") != nil)
    }

    /// No body at all says so: "in no supported image format" read as a body that came.
    @Test func anEmptyBodyIsNotAnImageThatSaysItIsEmpty() async throws {
        let h = try LoaderHarness()
        h.server.route("/empty.png", .ok([]))
        h.server.route("/204.png", .status(204))
        h.server.route("/text.png", .ok(Array("hello".utf8), contentType: "text/plain"))
        #expect(await h.load("/empty.png").error?.message == "not an image: the body is empty; the server labelled it image/png")
        #expect(await h.load("/204.png").error?.message == "not an image: the body is empty")
        #expect(await h.load("/text.png").error?.message
                == "not an image: the body is in no supported image format; the server labelled it text/plain")
        #expect(try h.entry("/empty.png") == nil && h.temporaryFiles.isEmpty)
    }

    @Test func aTruncatedPNGServedWithAMatchingLengthIsNotAnImage() async throws {
        let h = try LoaderHarness()
        h.server.serveDirectory(Paths.fixtures)
        let error = try #require(await h.load("/images/truncated.png").error)
        #expect(error.kind == .notAnImage)
        #expect(error.message == "PNG cut inside IDAT chunk 1")
        #expect(try h.entry("/images/truncated.png") == nil)
        #expect(h.temporaryFiles.isEmpty)
        #expect(await h.load("/images/truncated.png") { $0.acceptAnyContent = true }.result?.format == .png)
    }

    @Test func aTruncatedLargeJPEGIsCaughtWhileItStreams() async throws {
        // Far larger than the 64 KiB head: the check saw every byte as it was written.
        let h = try LoaderHarness()
        var jpeg = Array(LoaderHarness.jpeg.dropLast(2))           // drop EOI
        jpeg += [UInt8](repeating: 0x5A, count: 300_000)           // more "scan data"
        h.server.route("/big-cut.jpg", .ok(jpeg, contentType: "image/jpeg"))
        h.server.route("/big.jpg", .ok(jpeg + [0xFF, 0xD9], contentType: "image/jpeg"))
        #expect(await h.load("/big-cut.jpg").error?.message == "JPEG ends inside scan data (scan 1)")
        #expect(await h.load("/big.jpg").result?.bytes == Int64(jpeg.count + 2))
    }

    @Test func imagesFollowedByOtherBytesAreStoredWhole() async throws {
        let h = try LoaderHarness()
        let html = Array("<html><body>Not Found</body></html>\n".utf8)
        let png = LoaderHarness.png + (0..<30_000).flatMap { _ in html }             // ~1 MiB after IEND
        let motionPhoto = LoaderHarness.jpeg + [0, 0, 0, 0x18] + Array("ftypmp42".utf8)
            + [UInt8](repeating: 0xFF, count: 200_000)                                 // a video after EOI
        let gif = LoaderHarness.fixture("images/anim-33x17.gif") + Array("trailing junk".utf8)
        h.server.route("/trailing.png", .ok(png, contentType: "image/png"))
        h.server.route("/motion.jpg", .ok(motionPhoto, contentType: "image/jpeg"))
        h.server.route("/trailing.gif", .ok(gif, contentType: "image/gif"))
        for (path, body, format) in [("/trailing.png", png, "png"), ("/motion.jpg", motionPhoto, "jpeg"), ("/trailing.gif", gif, "gif")] {
            let result = try #require(await h.load(path).result, "\(path)")
            #expect(result.format?.name == format && result.bytes == Int64(body.count), "\(path)")
            let stored = try #require(try h.entry(path))
            #expect(try Data(contentsOf: URL(fileURLWithPath: stored.bodyPath)) == Data(body), "stored byte for byte")
        }
    }

    @Test func aBodyCutShortOfItsContentLengthFailsAndLeavesNothing() async throws {
        let h = try LoaderHarness()
        var response = ScriptedResponse.ok(LoaderHarness.png)
        response.closeAfterBodyBytes = 60
        h.server.route("/cut.png", response)
        let error = try #require(await h.load("/cut.png").error)
        #expect(error.kind != .notAnImage)
        #expect(try h.entry("/cut.png") == nil)
        #expect(h.temporaryFiles.isEmpty)
    }
}
