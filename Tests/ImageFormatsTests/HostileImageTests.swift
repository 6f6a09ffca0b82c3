import ImageFormats
import Testing

/// Image headers whose numbers no `Int` holds (issue 14 item 1; also the
/// regression tests for what the fuzz targets in Fuzz/ find).
@Suite struct HostileImageTests {
    @Test(arguments: [
        #"<svg width="9.3e18"/>"#, #"<svg height="1e30"/>"#, #"<svg viewBox="0 0 1e30 1"/>"#,
        #"<svg width="9223372036854775807"/>"#, #"<svg viewBox="0 0 -1e30 -9.3e18"/>"#,
        #"<svg width="1e309" height="-0" viewBox="nan nan inf -inf"/>"#,
    ])
    func svgSizesNoImageHasAreUnknown(document: String) {
        let info = ImageInfo.sniff(Array(document.utf8))
        #expect(info?.format == .svg)
        #expect(info?.width == nil || info?.width == 0)
        #expect((info?.height ?? 0) <= 1)
    }

    @Test func svgSizesStillReadWhenSane() {
        #expect(ImageInfo.sniff(Array(#"<svg width="1e3" height="20.4px"/>"#.utf8)) == ImageInfo(format: .svg, width: 1000, height: 20))
        #expect(ImageInfo.sniff(Array(#"<svg viewBox="0 0 1e15 2"/>"#.utf8)) == ImageInfo(format: .svg, width: 1_000_000_000_000_000, height: 2))
    }
}
