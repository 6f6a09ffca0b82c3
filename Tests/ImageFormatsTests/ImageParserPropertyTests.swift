import ImageFormats
import PropertyBased
import Testing
import TestSupport

/// Random and hostile input for the image sniffers and the structure check,
/// the parsers that meet every body from the network. Each runs over
/// `GuardedMemory`, so reading a single byte outside the buffer crashes the
/// test run instead of passing quietly.
@Suite struct ImageParserPropertyTests {
    static let formats: Set<String> = ["png", "jpeg", "gif", "webp", "bmp", "tiff", "ico", "avif", "heif", "jxl", "svg"]

    static let fixtures: [[UInt8]] = ImageFixture.manifest.map { ImageFixture.bytes($0.file) }

    /// Magic numbers of every format, so random tails reach deep into each reader.
    static let magics: [[UInt8]] = [
        [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8),
        [0xFF, 0xD8, 0xFF], [0xFF, 0xD8, 0xFF, 0xE0], [0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11],
        Array("GIF89a".utf8), Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8), Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8L".utf8),
        Array("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8X".utf8), Array("BM".utf8), [0x49, 0x49, 0x2A, 0x00], [0x4D, 0x4D, 0x00, 0x2A],
        [0x49, 0x49, 0x2B, 0x00, 0x08, 0x00, 0x00, 0x00], [0x00, 0x00, 0x01, 0x00],
        [0, 0, 0, 0x18] + Array("ftypavif".utf8), [0, 0, 0, 0x10] + Array("ftypheic".utf8), [0xFF, 0x0A],
        [0x00, 0x00, 0x00, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A], Array("<svg ".utf8),
        Array("<?xml version=\"1.0\"?><!-- ".utf8),
    ]

    func sniffGuarded(_ bytes: [UInt8]) -> ImageInfo? {
        let atEnd = GuardedMemory.with(bytes, .flushWithEnd) { ImageInfo.sniff($0) }
        let atStart = GuardedMemory.with(bytes, .flushWithStart) { ImageInfo.sniff($0) }
        #expect(atEnd == atStart)
        if let info = atEnd {
            #expect(Self.formats.contains(info.format.name))
            #expect((info.width ?? 0) >= 0 && (info.height ?? 0) >= 0)
            #expect(ImageInfo.sniff(bytes) == info, "the array entry point agrees")
        }
        return atEnd
    }

    /// The structure check over guarded memory, fed whole and in pieces of
    /// 1 to 7 bytes: it reads nothing outside what it is fed, and how the
    /// body is split never changes the verdict.
    func structureGuarded(_ bytes: [UInt8]) {
        GuardedMemory.with(bytes) { buffer in
            let raw = UnsafeRawBufferPointer(buffer)
            var whole = ImageStructure()
            whole.feed(raw)
            var pieces = ImageStructure()
            var at = 0
            while at < raw.count {
                let size = min(raw.count - at, 1 + at % 7)
                pieces.feed(UnsafeRawBufferPointer(rebasing: raw[at..<at + size]))
                at += size
            }
            #expect(whole.verdict == pieces.verdict)
            #expect(whole.length == Int64(bytes.count))
        }
    }

    @Test func sniffingRandomBytesNeverCrashesNorReadsOutside() async {
        await propertyCheck(count: 400, input: Gen.uint8().array(of: 0...300)) { bytes in
            _ = sniffGuarded(bytes)
        }
    }

    @Test func sniffingMagicNumbersFollowedByRandomBytes() async {
        await propertyCheck(count: 1500, input: Gen<[UInt8]?>.element(of: Self.magics), Gen.uint8().array(of: 0...200)) { magic, tail in
            let bytes = (magic ?? []) + tail
            _ = sniffGuarded(bytes)
            structureGuarded(bytes)
        }
    }

    @Test func sniffingCutAndCorruptedFixtures() async {
        let mutation = zip(Gen.int(in: 0...4096), Gen.uint8())
        await propertyCheck(count: 1500, input: Gen.int(in: 0..<Self.fixtures.count), Gen.int(in: 0...4096),
                            mutation.array(of: 0...8)) { index, cut, flips in
            var bytes = Array(Self.fixtures[index].prefix(cut))
            for (offset, value) in flips where !bytes.isEmpty { bytes[offset % bytes.count] = value }
            _ = sniffGuarded(bytes)
            structureGuarded(bytes)
        }
    }

    @Test func everyPrefixOfEveryFixtureIsSafeAgainstGuardPages() {
        for fixture in Self.fixtures {
            for length in stride(from: 0, through: min(fixture.count, 600), by: 1) {
                let prefix = Array(fixture.prefix(length))
                _ = sniffGuarded(prefix)
            }
        }
    }
}
