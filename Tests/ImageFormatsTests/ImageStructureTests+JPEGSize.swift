@testable import ImageFormats
import Testing
import TestSupport

/// A camera JPEG's frame header can lie far into the body: behind a 64 KiB
/// EXIF segment (its thumbnail) and an ICC profile in several APP2 segments.
extension ImageStructureTests {
    /// Streamed, with the 64 KiB head the loader keeps (`CacheDefaults.headLimit`):
    /// the size came only from the head, so a frame header past it left the
    /// JPEG without one ("jpeg" with no size in the tool's line). The walk
    /// now reads it on the way; cut inside it, the body is told so.
    @Test func aJPEGFrameHeaderPastTheHeadStillGivesTheSize() {
        for segments in [0, 1, 3] {
            let body = ImageFixture.jpegWithLargeMetadata(segments: segments)
            var structure = ImageStructure()
            body.withUnsafeBytes { structure.feed($0) }
            let inspection = structure.inspection(head: Array(body.prefix(64 * 1024)))
            #expect(inspection.image?.width == 120 && inspection.image?.height == 80, "\(segments) segments: \(inspection)")
            #expect(inspection == ImageFormats.inspect(body), "as the whole body says")
        }
        let body = ImageFixture.jpegWithLargeMetadata(segments: 3)
        let frame = body.indices.first { body[$0] == 0xFF && body[$0 + 1] == 0xC0 }!
        #expect(problem(Array(body.prefix(frame + 6))) == "JPEG cut inside its SOF0 segment")
    }
}
