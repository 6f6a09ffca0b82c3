import Foundation
import Testing
import TestSupport

/// A resumed image is judged whole: the structure check walks the kept
/// part before the `206` continues it (without `--any`).
@Suite struct ResumeImageE2ETests {
    /// CRC-32 as PNG computes it (bitwise: tests need no speed).
    static func crc(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return ~c
    }

    static func chunk(_ type: String, _ data: [UInt8], damaged: Bool = false) -> [UInt8] {
        let typed = Array(type.utf8) + data
        let sum = crc(typed[...]) ^ (damaged ? 1 : 0)
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        return be32(UInt32(data.count)) + typed + be32(sum)
    }

    /// A 3 MB PNG, 40×30: a 2 MB text chunk (its CRC inside the part kept at the cut), then the image.
    static func png(damagedText: Bool) -> [UInt8] {
        let ihdr: [UInt8] = [0, 0, 0, 40, 0, 0, 0, 30, 8, 2, 0, 0, 0]
        let text = Array("Comment\u{0}".utf8) + [UInt8](repeating: 0x61, count: 1_400_000)
        let idat = (0..<1_600_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }   // the check does not inflate
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr)
            + chunk("tEXt", text, damaged: damagedText) + chunk("IDAT", idat) + chunk("IEND", [])
    }

    static let cut = 1_500_000

    func server(_ body: [UInt8]) throws -> ScriptedServer {
        let server = try ScriptedServer()
        let full = LockedCounter()
        server.route("/big.png") { request in
            let etag = "\"png\""
            if let range = request.header("Range"), request.header("If-Range") == etag, range.hasPrefix("bytes="),
               let first = Int(range.dropFirst(6).prefix { $0 != "-" }) {
                return ScriptedResponse(status: 206, headers: [("ETag", etag), ("Content-Type", "image/png"),
                                                               ("Content-Range", "bytes \(first)-\(body.count - 1)/\(body.count)")],
                                        body: Array(body[first...]))
            }
            var response = ScriptedResponse(status: 200, headers: [("ETag", etag), ("Content-Type", "image/png")], body: body)
            if full.next() == 1 { response.closeAfterBodyBytes = Self.cut }
            return response
        }
        return server
    }

    /// The resumed run's terminal JSON object.
    func cutThenResume(_ body: [UInt8]) throws -> [String: Any] {
        let server = try server(body)
        let cli = try CLI()
        let url = server.url("/big.png")
        let first = try cli.run(["--json", "--retries", "0", url])
        #expect(first.status == 1, "the cut transfer is a failure: \(first.stdout)")
        let second = try cli.run(["--json", url])
        #expect(server.requests("/big.png").last?.header("Range") != nil, "the second run resumed")
        return try #require(CLI.jsonLines(second.stdout)?.last { $0["url"] as? String == url })
    }

    @Test func aResumedImageIsWalkedFromItsFirstByte() throws {
        let done = try cutThenResume(Self.png(damagedText: false))
        #expect(done["phase"] as? String == "success", "\(done)")
        #expect(done["format"] as? String == "png" && done["width"] as? Int == 40 && done["height"] as? Int == 30)
    }

    @Test func damageInTheKeptPartIsFound() throws {
        let done = try cutThenResume(Self.png(damagedText: true))
        let error = done["error"] as? [String: Any]
        #expect(error?["kind"] as? String == "not-an-image")
        #expect(error?["message"] as? String == "PNG tEXt chunk fails its CRC check (damaged)")
    }
}
