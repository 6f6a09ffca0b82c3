import Foundation
import ImageFormats
import Testing
import TestSupport

@Suite struct ImageInfoTests {
    typealias Row = ImageFixture

    /// Every image in Fixtures/manifest.tsv, with the format and size the
    /// generating tools reported.
    static let manifest = ImageFixture.manifest

    @Test func manifestIsComplete() {
        #expect(Self.manifest.count >= 13)
        #expect(Set(Self.manifest.map(\.format)).isSuperset(of: ["png", "jpeg", "gif", "webp", "bmp", "tiff", "ico", "svg", "avif", "jxl"]))
    }

    @Test(arguments: manifest)
    func readsFormatAndDimensions(row: Row) throws {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/" + row.file)))
        let info = try #require(ImageInfo.sniff(bytes))
        #expect(info.format.name == row.format)
        #expect(info.width == row.width)
        #expect(info.height == row.height)
    }

    @Test func htmlIsNotAnImage() throws {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/not-an-image.html")))
        #expect(ImageInfo.sniff(bytes) == nil)
        #expect(ImageInfo.sniff([]) == nil)
        #expect(ImageInfo.sniff(Array("{\"json\": true}".utf8)) == nil)
    }

    @Test func everyPrefixOfEveryFixtureIsSafe() throws {
        for row in Self.manifest {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/" + row.file)))
            for length in 0...min(bytes.count, 300) {
                _ = ImageInfo.sniff(Array(bytes.prefix(length)))   // must not trap
            }
        }
    }
}
