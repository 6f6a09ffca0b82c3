import Foundation
import Testing
import TestSupport

/// Issue 23, item 1: a compressed body is whole only when each coding says
/// its stream ended and its check value matched. libcurl 7.88 passed a cut
/// stream as whole, so a shortened image was stored as `success` (with
/// `--any`, or for a format whose structure cannot tell).
@Suite struct CompressedBodyE2ETests {
    static let png = FetchE2ETests.png

    /// 64 KiB that compress poorly (a fixed LCG), so every stream has many blocks to cut between.
    static let noise: [UInt8] = {
        var state: UInt32 = 0x2545_F491
        return (0..<(64 * 1024)).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }()

    /// `bytes` in `coding`, made by the reference tools (Debian's python3 zlib and brotli, zstd with its checksum).
    static func encode(_ coding: String, _ bytes: [UInt8]) throws -> [UInt8] {
        let script = """
            import gzip, subprocess, sys, zlib
            c, d = sys.argv[1], sys.stdin.buffer.read()
            if c == "gzip": o = gzip.compress(d, mtime=0)
            elif c == "deflate": o = zlib.compress(d)
            elif c == "br":
                import brotli
                o = brotli.compress(d)
            else: o = subprocess.run(["zstd", "-q", "-c", "--check"], input=d, capture_output=True, check=True).stdout
            sys.stdout.buffer.write(o)
            """
        let result = try runProcess("/usr/bin/python3", ["-c", script, coding], stdin: bytes)
        guard result.status == 0, !result.stdoutBytes.isEmpty else { throw TestSupportError.message("encode \(coding): \(result.stderr)") }
        return result.stdoutBytes
    }

    /// One damaged response per body: the PNG (fetched without `--any`) and the noise (with `--any`).
    struct Case: Sendable {
        let name: String
        let coding: String
        let damage: @Sendable ([UInt8]) -> (body: [UInt8], headers: [(String, String)], closeConnection: Bool)
        let message: String
    }

    static let cutShort = "network error: compressed body cut short"

    static let cases: [Case] = [
        Case(name: "gzip ending before its trailer", coding: "gzip",
             damage: { (Array($0.dropLast(8)), [], false) }, message: cutShort),
        Case(name: "gzip cut in the middle", coding: "gzip",
             damage: { (Array($0.prefix($0.count / 2)), [], false) }, message: cutShort),
        Case(name: "a Content-Length shorter than the gzip stream", coding: "gzip",
             damage: { ($0, [("Content-Length", "\($0.count / 2)")], true) }, message: cutShort),
        Case(name: "a corrupt gzip CRC", coding: "gzip",
             damage: { var b = $0; b[b.count - 8] ^= 0x01; return (b, [], false) },
             message: "malformed response from the server: compressed body corrupt: CRC mismatch"),
        Case(name: "a gzip ISIZE that does not match", coding: "gzip",
             damage: { var b = $0; b[b.count - 4] ^= 0x01; return (b, [], false) },
             message: "malformed response from the server: compressed body corrupt: length mismatch (gzip ISIZE)"),
        Case(name: "deflate with a bad Adler-32", coding: "deflate",
             damage: { var b = $0; b[b.count - 1] ^= 0x01; return (b, [], false) },
             message: "malformed response from the server: compressed body corrupt: Adler-32 mismatch"),
        Case(name: "deflate ending before its Adler-32", coding: "deflate",
             damage: { (Array($0.dropLast(4)), [], false) }, message: cutShort),
        Case(name: "br cut mid-stream", coding: "br",
             damage: { (Array($0.prefix($0.count / 2)), [], false) }, message: cutShort),
        Case(name: "br missing its last byte", coding: "br",
             damage: { (Array($0.dropLast(1)), [], false) }, message: cutShort),
        Case(name: "zstd cut mid-stream", coding: "zstd",
             damage: { (Array($0.prefix($0.count / 2)), [], false) }, message: cutShort),
        Case(name: "zstd missing its checksum", coding: "zstd",
             damage: { (Array($0.dropLast(4)), [], false) }, message: cutShort),
        Case(name: "a corrupt zstd checksum", coding: "zstd",
             damage: { var b = $0; b[b.count - 1] ^= 0x01; return (b, [], false) },
             message: "malformed response from the server: compressed body corrupt: checksum mismatch"),
    ]

    @Test func aDamagedCompressedBodyIsNeverStored() async throws {
        let server = try ScriptedServer()
        var checks: [(url: String, any: Bool, message: String, name: String)] = []
        for (index, item) in Self.cases.enumerated() {
            for (any, body) in [(false, Self.png), (true, Self.noise)] {
                let encoded = try Self.encode(item.coding, body)
                let (damaged, extra, close) = item.damage(encoded)
                var response = ScriptedResponse.ok(damaged, contentType: any ? "application/octet-stream" : "image/png",
                                                   headers: [("Content-Encoding", item.coding)] + extra)
                response.closeConnection = close
                let path = "/\(index)-\(any ? "any" : "png")"
                server.route(path, response)
                checks.append((server.url(path), any, item.message, item.name))
            }
        }
        let cli = try CLI()
        for any in [false, true] {
            let urls = checks.filter { $0.any == any }.map(\.url)
            let result = try await cli.runOffPool(["--json", "--retries", "0"] + (any ? ["--any"] : []) + urls)
            #expect(result.status == 1, "\(result.stdout)")
            for check in checks where check.any == any {
                let error = try #require(FetchE2ETests.error(result, check.url), "\(check.name): \(result.stdout)")
                #expect(error["kind"] as? String == "network", "\(check.name), --any \(any): \(error)")
                #expect(error["message"] as? String == check.message, "\(check.name), --any \(any): \(error)")
            }
        }
        #expect(FetchE2ETests.storedFiles(cli).isEmpty, "stored: \(FetchE2ETests.storedFiles(cli))")
    }

    /// The same bodies whole are stored decoded, byte for byte: each coding,
    /// two stacked, and gzip members one after another (RFC 1952 §2.2).
    @Test func wholeCompressedBodiesAreStoredDecoded() async throws {
        let server = try ScriptedServer()
        var expected: [(url: String, body: [UInt8], any: Bool)] = []
        for coding in ["gzip", "deflate", "br", "zstd"] {
            for (any, body) in [(false, Self.png), (true, Self.noise)] {
                let path = "/\(coding)-\(any ? "any" : "png")"
                server.route(path, .ok(try Self.encode(coding, body), contentType: any ? "application/octet-stream" : "image/png",
                                       headers: [("Content-Encoding", coding)]))
                expected.append((server.url(path), body, any))
            }
        }
        let stacked = try Self.encode("br", try Self.encode("gzip", Self.noise))
        server.route("/stacked", .ok(stacked, contentType: "application/octet-stream", headers: [("Content-Encoding", "gzip, br")]))
        expected.append((server.url("/stacked"), Self.noise, true))
        let halves = try Self.encode("gzip", Array(Self.noise.prefix(1000))) + (try Self.encode("gzip", Array(Self.noise.dropFirst(1000))))
        server.route("/members", .ok(halves, contentType: "application/octet-stream", headers: [("Content-Encoding", "gzip")]))
        expected.append((server.url("/members"), Self.noise, true))
        let cli = try CLI()
        for any in [false, true] {
            let result = try await cli.runOffPool(["--json"] + (any ? ["--any"] : []) + expected.filter { $0.any == any }.map(\.url))
            #expect(result.status == 0, "\(result.stdout)")
        }
        for item in expected {
            #expect(try await ContentCodingE2ETests.storedBody(cli, item.url) == item.body, "\(item.url)")
        }
    }
}
