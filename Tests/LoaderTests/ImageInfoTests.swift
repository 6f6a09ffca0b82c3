import Foundation
import Loader
import Testing
import TestSupport

@Suite struct ImageInfoTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let file: String, format: String, width: Int, height: Int
        var testDescription: String { file }
    }

    /// Every image in Fixtures/manifest.tsv, with the format and size the
    /// generating tools reported.
    static let manifest: [Row] = {
        let text = (try? String(contentsOfFile: Paths.fixtures + "/manifest.tsv", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(separator: "\t").map(String.init)
            guard f.count >= 4, let w = Int(f[2]), let h = Int(f[3]) else { return nil }
            return Row(file: f[0], format: f[1], width: w, height: h)
        }
    }()

    @Test func manifestIsComplete() {
        #expect(Self.manifest.count >= 13)
        #expect(Set(Self.manifest.map(\.format)).isSuperset(of: ["png", "jpeg", "gif", "webp", "bmp", "tiff", "ico", "svg", "avif", "jxl"]))
    }

    @Test(arguments: manifest)
    func readsFormatAndDimensions(row: Row) throws {
        let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/" + row.file)))
        let info = try #require(ImageInfo.sniff(bytes))
        #expect(info.format == row.format)
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
