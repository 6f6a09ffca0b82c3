import Foundation
import Testing
import TestSupport

/// Bodies whose sizes claim more than they hold (issue 23 items 2 and 3),
/// served by the in-process fault server to the built binary: an AVIF box
/// of 0xFFFFFFFF bytes or a largesize of 2^64-1, at the top level and inside
/// `meta`; a WebP whose RIFF size (8, or odd) cuts its image. Each is
/// `not-an-image` and nothing of it is stored; the honest ones beside them
/// are stored whole.
@Suite struct SizeClaimE2ETests {
    static func be32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * $0)) } }
    static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    static func box(_ type: String, _ content: [UInt8]) -> [UInt8] { be32(8 + content.count) + Array(type.utf8) + content }

    /// A lie about a box's size: a 32-bit size of 0xFFFFFFFF, or size 1 with a largesize of 2^64-1.
    enum Lie { case size32, largesize }

    static func lying(_ box: [UInt8], _ lie: Lie) -> [UInt8] {
        switch lie {
        case .size32: return [0xFF, 0xFF, 0xFF, 0xFF] + box.dropFirst(4)
        case .largesize: return be32(1) + Array(box[4..<8]) + [UInt8](repeating: 0xFF, count: 8) + box.dropFirst(8)
        }
    }

    /// A 70×45 AVIF; `lie` at depth 1 rewrites its `meta` box, at depth 2 the `iprp` box inside `meta`.
    static func avif(_ lie: Lie? = nil, depth: Int = 1) -> [UInt8] {
        let ftyp = box("ftyp", Array("avif".utf8) + [0, 0, 0, 0] + Array("mif1avif".utf8))
        let ipco = box("ipco", box("ispe", [0, 0, 0, 0] + be32(70) + be32(45)))
        let ipma = box("ipma", [0, 0, 0, 0] + be32(1) + [0, 1] + [1, 0x81])
        var iprp = box("iprp", ipco + ipma)
        if let lie, depth == 2 { iprp = lying(iprp, lie) }
        var meta = box("meta", [0, 0, 0, 0] + box("pitm", [0, 0, 0, 0, 0, 1]) + iprp)
        if let lie, depth == 1 { meta = lying(meta, lie) }
        return ftyp + meta + box("mdat", [1, 2, 3])
    }

    /// A WebP fixture with its RIFF size replaced.
    static func webp(_ file: String, riffSize: Int) -> [UInt8] {
        let bytes = ImageFixture.bytes("images/\(file)")
        return Array(bytes.prefix(4)) + le32(riffSize) + bytes.dropFirst(8)
    }

    @Test func sizesThatClaimMoreThanTheBodyHoldsAreNotImages() async throws {
        let server = try ScriptedServer()
        let lies: [(String, [UInt8], String)] = [
            ("/meta-ffffffff.avif", Self.avif(.size32, depth: 1), "image/avif"),
            ("/iprp-ffffffff.avif", Self.avif(.size32, depth: 2), "image/avif"),
            ("/meta-largesize.avif", Self.avif(.largesize, depth: 1), "image/avif"),
            ("/iprp-largesize.avif", Self.avif(.largesize, depth: 2), "image/avif"),
            ("/riff-8.webp", Self.webp("lossy-50x40.webp", riffSize: 8), "image/webp"),
            ("/riff-odd-cut.webp", Self.webp("lossless-41x23.webp", riffSize: 55), "image/webp"),
        ]
        let oddWhole = Array(Self.webp("lossless-41x23.webp", riffSize: 57).dropLast())   // no pad byte after the odd size
        let honest: [(String, [UInt8], String, Int)] = [
            ("/honest.avif", Self.avif(), "image/avif", 70),
            ("/riff-odd-whole.webp", oddWhole, "image/webp", 41),
            ("/riff-odd-trailing.webp", oddWhole + Array("<html></html>".utf8), "image/webp", 41),
        ]
        #expect(lies[4].1.count == 150 && oddWhole.count == 65)
        for (path, body, type) in lies { server.route(path, .ok(body, contentType: type)) }
        for (path, body, type, _) in honest { server.route(path, .ok(body, contentType: type)) }
        let cli = try CLI()
        let urls = lies.map { server.url($0.0) } + honest.map { server.url($0.0) }
        let result = try await cli.runOffPool(["--json", "--retries", "0"] + urls)
        #expect(result.signal == nil && result.status == 1, "status \(result.status): \(result.stderr)")
        for (path, _, _) in lies {
            let error = try #require(FetchE2ETests.error(result, server.url(path)), "\(path): \(result.stdout)")
            #expect(error["kind"] as? String == "not-an-image", "\(path): \(error)")
            let message = error["message"] as? String ?? ""
            #expect(message.hasPrefix(path.hasSuffix(".avif") ? "AVIF/HEIF cut" : "WebP holds no whole image inside its RIFF size"),
                    "\(path): \(message)")
        }
        for (path, body, _, width) in honest {
            let line = try #require(FetchE2ETests.terminal(result, server.url(path)), "\(path): \(result.stdout)")
            #expect(line["phase"] as? String == "success" && line["width"] as? Int == width, "\(path): \(line)")
            #expect(line["bytes"] as? Int == body.count, "stored whole, trailing bytes included: \(line)")
        }
        // Only the honest bodies were stored: one entry (a 32-hex key) each.
        let keys = Set(FetchE2ETests.storedFiles(cli).compactMap { path -> String? in
            let name = path.split(separator: "/").last.map(String.init) ?? path
            let key = name.hasSuffix(".meta") ? String(name.dropLast(5)) : name
            return !path.contains("tmp") && key.count == 32 && key.allSatisfy(\.isHexDigit) ? key : nil
        })
        #expect(keys.count == honest.count, "\(FetchE2ETests.storedFiles(cli))")
    }
}
