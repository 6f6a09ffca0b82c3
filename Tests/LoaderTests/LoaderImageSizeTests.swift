import Loader
import Testing
import TestSupport

/// The format and pixel size a load reports (SPEC §5: read from the header).
@Suite struct LoaderImageSizeTests {
    /// A JPEG whose frame header lies past the 64 KiB the loader keeps of a
    /// body's head (a 60 KB EXIF segment and an ICC profile before it) was
    /// reported "jpeg" with no size, downloaded and from the cache; now 120x80.
    @Test func aJPEGWithLargeMetadataReportsItsSize() async throws {
        let h = try LoaderHarness()
        h.server.route("/photo.jpg", .ok(ImageFixture.jpegWithLargeMetadata(segments: 3), contentType: "image/jpeg"))
        for expected in [Source.network, .cache] {
            let result = await h.load("/photo.jpg").result
            #expect(result?.source == expected)
            #expect(result?.format?.name == "jpeg" && result?.width == 120 && result?.height == 80,
                    "\(expected): \(String(describing: result?.width))x\(String(describing: result?.height))")
        }
    }
}
