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

    /// The bytes of `Fixtures/name` ([] when it is missing, so the test that needs it fails).
    public static func bytes(_ name: String) -> [UInt8] {
        (try? Array(Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/" + name)))) ?? []
    }
}
