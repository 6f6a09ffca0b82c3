import Foundation

/// One image of `Fixtures/manifest.tsv`, with the format and size the
/// generating tools reported; the image tests and the loader tests share them.
public struct ImageFixture: Sendable, CustomStringConvertible {
    public let file: String, format: String, width: Int, height: Int
    public var description: String { file }

    /// Every image in the manifest.
    public static let manifest: [ImageFixture] = {
        let text = (try? String(contentsOfFile: Paths.fixtures + "/manifest.tsv", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(separator: "\t").map(String.init)
            guard f.count >= 4, let w = Int(f[2]), let h = Int(f[3]) else { return nil }
            return ImageFixture(file: f[0], format: f[1], width: w, height: h)
        }
    }()

    public static let png = bytes("images/red-64x48.png")
    public static let jpeg = bytes("images/photo-120x80.jpg")

    /// `jpeg` (120×80) as a camera or an editor writes it: `segments` APPn
    /// segments of 60,000 bytes after its SOI (an EXIF segment, then ICC
    /// profile parts), which put its frame header past the first 64 KiB.
    public static func jpegWithLargeMetadata(segments: Int) -> [UInt8] {
        var body = Array(jpeg.prefix(2))
        for index in 0..<segments {
            let payload = Array((index == 0 ? "Exif\0\0" : "ICC_PROFILE\0").utf8) + [UInt8](repeating: 0, count: 60_000)
            let length = payload.count + 2
            body += [0xFF, index == 0 ? 0xE1 : 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        }
        return body + jpeg.dropFirst(2)
    }

    /// The bytes of `Fixtures/name` ([] when it is missing, so the test that needs it fails).
    public static func bytes(_ name: String) -> [UInt8] {
        (try? Array(Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/" + name)))) ?? []
    }
}
