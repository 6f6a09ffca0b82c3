import Foundation
import ImageDecoding
import ImageFormats
import Testing
import TestSupport

/// The decoder on the fixture images, whole and with one byte flipped inside
/// their entropy-coded data (a flip the structure check cannot see).
@Suite struct ImageDecodingTests {
    /// A fixture's bytes, with the byte at `flip` inverted.
    static func fixture(_ name: String, flip: Int? = nil) throws -> [UInt8] {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Paths.packageRoot + "/Fixtures/images/" + name)))
        if let flip { bytes[flip] ^= 0xFF }
        return bytes
    }

    /// The coded-data flips the end-to-end tests use: JPEG scan data (the scan starts at 292),
    /// the VP8 partition (after the 10-byte frame header at 20), GIF LZW data (58…78).
    static let flips: [(name: String, format: ImageFormat, offset: Int)] = [
        ("photo-120x80.jpg", .jpeg, 354), ("lossy-50x40.webp", .webp, 40), ("anim-33x17.gif", .gif, 61),
    ]

    func decode(_ bytes: [UInt8], as format: ImageFormat, maximumPixels: Int64 = DecodeLimits.maximumPixels) throws -> DecodeVerdict {
        let temp = try TempDirectory(prefix: "asyncfetch-decode")
        let path = temp.file("body")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return ImageDecoding.decode(path: path, format: format, maximumPixels: maximumPixels)
    }

    @Test func wholeFixturesDecode() throws {
        let decodable: [(String, ImageFormat)] = [
            ("photo-120x80.jpg", .jpeg), ("progressive-90x60.jpg", .jpeg), ("red-64x48.png", .png), ("anim-33x17.gif", .gif),
            ("lossy-50x40.webp", .webp), ("lossless-41x23.webp", .webp), ("alpha-77x31.webp", .webp),
            ("scan-25x35.tiff", .tiff), ("photo-70x45.avif", .avif), ("still-36x28.jxl", .jxl), ("vector-200x100.svg", .svg),
        ]
        for (name, format) in decodable {
            #expect(ImageDecoding.decodes(format), "libvips reads \(format)")
            #expect(try decode(Self.fixture(name), as: format) == .decoded, "\(name)")
        }
    }

    @Test func bmpAndICOKeepTheStructureVerdict() throws {
        #expect(!ImageDecoding.decodes(.bmp) && !ImageDecoding.decodes(.ico))
        #expect(try decode(Self.fixture("bitmap-30x20.bmp"), as: .bmp) == .notSupported)
        #expect(try decode(Self.fixture("favicon-16x16.ico"), as: .ico) == .notSupported)
    }

    @Test func aFlippedByteInCodedDataPassesTheStructureButNotTheDecoder() throws {
        for (name, format, offset) in Self.flips {
            let bytes = try Self.fixture(name, flip: offset)
            guard case .image = ImageFormats.inspect(bytes) else {
                Issue.record("\(name) flipped at \(offset): the structure check should still accept it")
                continue
            }
            let verdict = try decode(bytes, as: format)
            #expect(verdict.refusal?.hasPrefix("decoder refused the image: ") == true, "\(name) flipped at \(offset): \(verdict)")
        }
    }

    @Test func theDeclaredSizeIsCheckedBeforeDecoding() throws {
        let verdict = try decode(Self.fixture("photo-120x80.jpg"), as: .jpeg, maximumPixels: 120 * 80 - 1)
        #expect(verdict.refusal?.contains("120×80 is over") == true, "\(verdict)")
    }

    @Test func aBodyInAnotherFormatIsRefusedWithTheDecodersMessage() throws {
        let verdict = try decode(Self.fixture("red-64x48.png"), as: .jpeg)
        #expect(verdict.refusal?.contains("Not a JPEG") == true, "\(verdict)")
    }

    /// libvips keeps one error buffer for the process: decodes that failed
    /// at once read each other's message, or none ("the decoder failed").
    /// Each refusal now carries its own body's message, as when decoded alone.
    @Test func decodesRefusedAtOnceEachGetTheirOwnMessage() throws {
        let temp = try TempDirectory(prefix: "asyncfetch-decode")
        let bodies = try Self.flips.map { flip -> (path: String, format: ImageFormat) in
            let path = temp.file(flip.name)
            try Data(Self.fixture(flip.name, flip: flip.offset)).write(to: URL(fileURLWithPath: path))
            return (path, flip.format)
        }
        let alone = bodies.map { ImageDecoding.decode(path: $0.path, format: $0.format) }
        #expect(Set(alone.map { "\($0)" }).count == bodies.count, "three different messages: \(alone)")
        let rounds = 40
        final class Wrong: @unchecked Sendable {   // under `lock`
            let lock = NSLock()
            var verdicts: [String] = []
        }
        let seen = Wrong()
        DispatchQueue.concurrentPerform(iterations: rounds * bodies.count) { index in
            let body = index % bodies.count
            let verdict = ImageDecoding.decode(path: bodies[body].path, format: bodies[body].format)
            if verdict != alone[body] { seen.lock.withLock { seen.verdicts.append("\(bodies[body].format): \(verdict)") } }
        }
        let wrong = seen.verdicts
        #expect(wrong.isEmpty, "\(wrong.count) of \(rounds * bodies.count) with another message, e.g. \(wrong.prefix(3))")
    }
}
