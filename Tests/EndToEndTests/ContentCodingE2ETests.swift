import Foundation
import Testing
import TestSupport

/// Content coding (issues 14 and 16): libcurl offers and decodes gzip,
/// deflate, br and zstd, so the cache only ever holds decoded bodies, and
/// `--max-size` bounds the decoded size, compression bombs included.
@Suite struct ContentCodingE2ETests {
    static let png = FetchE2ETests.png

    static func gzip(_ bytes: [UInt8]) throws -> [UInt8] {
        try runProcess("/usr/bin/gzip", ["-c", "-n"], stdin: bytes).stdoutBytes
    }

    static func storedBody(_ cli: CLI, _ url: String) async throws -> [UInt8]? {
        let path = try await cli.runOffPool(["cache", "path", url])
        guard path.status == 0 else { return nil }
        let file = path.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return (try? Data(contentsOf: URL(fileURLWithPath: file))).map { [UInt8]($0) }
    }

    @Test func encodedBodiesAreStoredDecodedWhateverTheRequestAskedFor() async throws {
        let server = try ScriptedServer()
        let encoded = try Self.gzip(Self.png)
        #expect(encoded != Self.png && !encoded.isEmpty)
        let response = ScriptedResponse.ok(encoded, headers: [("Content-Encoding", "gzip")])
        for path in ["/plain.png", "/asked.png", "/identity.png", "/any.png"] { server.route(path, response) }
        let cli = try CLI()
        let plain = server.url("/plain.png"), asked = server.url("/asked.png")
        let identity = server.url("/identity.png"), any = server.url("/any.png")
        let first = try await cli.runOffPool(["--json", plain])
        #expect(first.status == 0, "\(first.stdout)")
        let offer = server.requests("/plain.png").first?.header("Accept-Encoding") ?? ""
        for coding in ["gzip", "deflate", "br", "zstd"] {
            #expect(offer.contains(coding), "Accept-Encoding: \(offer)")
        }
        // A user's own Accept-Encoding is sent as given, and the body is still decoded.
        let own = try await cli.runOffPool(["--json", "-H", "Accept-Encoding: gzip", asked])
        #expect(own.status == 0, "\(own.stdout)")
        #expect(server.requests("/asked.png").first?.header("Accept-Encoding") == "gzip")
        let ignored = try await cli.runOffPool(["--json", "-H", "Accept-Encoding: identity", identity])
        #expect(ignored.status == 0, "\(ignored.stdout)")
        let anything = try await cli.runOffPool(["--json", "--any", "-H", "Accept-Encoding: gzip", any])
        #expect(anything.status == 0, "\(anything.stdout)")
        for url in [plain, asked, identity, any] {
            #expect(try await Self.storedBody(cli, url) == Self.png, "\(url) holds encoded bytes")
        }
        #expect(FetchE2ETests.terminal(first, plain)?["bytes"] as? Int == Self.png.count)
    }

    /// `deflate` is a zlib stream (RFC 9110 §8.4.1.2), but some servers send a
    /// raw RFC 1951 stream for it; browsers and curl take both, and so does
    /// asyncfetch (it failed with "the deflate decoder made no progress").
    @Test func aRawDeflateStreamIsDecodedLikeAZlibOne() async throws {
        let server = try ScriptedServer()
        let gzipped = try Self.gzip(Self.png)
        let raw = Array(gzipped.dropFirst(10).dropLast(8))   // gzip -n: a 10-byte header, an 8-byte trailer
        server.route("/raw.png", .ok(raw, headers: [("Content-Encoding", "deflate")]))
        let cli = try CLI()
        let url = server.url("/raw.png")
        let result = try await cli.runOffPool(["--json", "--retries", "0", url])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(FetchE2ETests.terminal(result, url)?["bytes"] as? Int == Self.png.count, "\(result.stdout)")
        #expect(try await Self.storedBody(cli, url) == Self.png)
    }

    /// A coding libcurl cannot decode is a failure: encoded bytes are never stored, not even with --any.
    @Test func anUnknownCodingFailsAndStoresNothing() async throws {
        let server = try ScriptedServer()
        server.route("/x.png", .ok(Self.png, headers: [("Content-Encoding", "x-secret")]))
        server.route("/bad.png", .ok(Array("not gzip at all".utf8), headers: [("Content-Encoding", "gzip")]))
        let cli = try CLI()
        let urls = [server.url("/x.png"), server.url("/bad.png")]
        let result = try await cli.runOffPool(["--json", "--any", "--retries", "0"] + urls)
        for url in urls {
            let error = try #require(FetchE2ETests.error(result, url), "\(result.stdout)")
            #expect(error["kind"] as? String == "network", "\(error)")
            #expect((error["message"] as? String)?.hasPrefix("malformed response from the server: ") == true, "\(error)")
        }
        #expect(FetchE2ETests.storedFiles(cli).isEmpty, "stored: \(FetchE2ETests.storedFiles(cli))")
    }

    /// A body whose label says image but whose bytes do not: the message says
    /// so, and never quotes the label as if it proved the opposite.
    @Test func notAnImageNeverQuotesTheLabelAsProof() async throws {
        let server = try ScriptedServer()
        server.route("/fake.png", .ok(Array("<html>hello</html>".utf8), contentType: "image/png"))
        let cli = try CLI()
        let url = server.url("/fake.png")
        let result = try await cli.runOffPool(["--json", url])
        let error = try #require(FetchE2ETests.error(result, url))
        #expect(error["kind"] as? String == "not-an-image")
        #expect(error["message"] as? String
                == "not an image: the body is in no supported image format; the server labelled it image/png")
    }

    /// Item 5 of issue 14: 10 GiB of zeros in each coding. Each is `too-large`
    /// (the decoded size passes `--max-size`), memory stays flat, nothing is stored.
    @Test(arguments: ["gzip", "deflate", "br", "zstd"])
    func aTenGibibyteBombIsTooLarge(coding: String) async throws {
        let work = try TempDirectory(prefix: "asyncfetch-bomb")
        let bombPath = work.path + "/bomb." + coding
        let made = try runProcess("/usr/bin/python3", [Paths.packageRoot + "/Tests/tools/bomb.py", coding, "10", bombPath])
        #expect(made.status == 0, "bomb.py: \(made.stderr)")
        let bomb = [UInt8](try Data(contentsOf: URL(fileURLWithPath: bombPath)))
        #expect(bomb.count < 16 << 20, "\(coding) bomb of \(bomb.count) bytes")
        let server = try ScriptedServer()
        server.route("/bomb.png", .ok(bomb, headers: [("Content-Encoding", coding)]))
        let cli = try CLI()
        let url = server.url("/bomb.png")
        // The child's peak RSS, measured by its parent.
        let measure = "import resource,subprocess,sys; r=subprocess.run(sys.argv[1:]); "
            + "sys.stderr.write('maxrss=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)"
        let start = Date()
        let result = try runProcess("/usr/bin/python3", ["-c", measure, CLI.binary, "--json", "--any", url],
                                    environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 60)
        let elapsed = Date().timeIntervalSince(start)
        let error = try #require(FetchE2ETests.error(result, url), "\(result.stdout) \(result.stderr)")
        #expect(error["kind"] as? String == "too-large", "\(error)")
        #expect(error["message"] as? String == "response too large: the body went past the 67108864-byte limit")
        let rss = result.stderr.split(separator: "\n").last { $0.hasPrefix("maxrss=") }.flatMap { Int($0.dropFirst(7)) }
        let kilobytes = try #require(rss, "\(result.stderr)")
        #expect(kilobytes < 64 * 1024, "peak RSS \(kilobytes) KB for a \(coding) bomb")
        #expect(elapsed < 20, "\(elapsed) s")
        #expect(FetchE2ETests.storedFiles(cli).isEmpty, "stored: \(FetchE2ETests.storedFiles(cli))")
    }

    /// SPEC §5: "A decoded body counts only when its coding says the stream
    /// ended and its check value matches". An empty body with
    /// `Content-Encoding: gzip` is no gzip stream at all (RFC 1952: a member
    /// has a header and a trailer): a failure even under `--any`, never a
    /// stored 0-byte success. An empty body in no coding is still one.
    @Test func anEmptyBodyInAContentCodingIsNotAStoredSuccess() async throws {
        let server = try ScriptedServer()
        for coding in ["gzip", "br", "zstd", "deflate"] {
            server.route("/empty-\(coding)", .ok([], contentType: "application/octet-stream", headers: [("Content-Encoding", coding)]))
        }
        server.route("/empty-plain", .ok([], contentType: "application/octet-stream"))
        let cli = try CLI()
        for coding in ["gzip", "br", "zstd", "deflate"] {
            let url = server.url("/empty-\(coding)")
            let result = try await cli.run(["--any", "--json", url])
            #expect(result.status == 1, "\(coding): \(result.stdout)")
            let failure = try #require(try HTTPCachingE2ETests.json(result).first { $0["phase"] as? String == "failure" }, "\(coding)")
            let error = try #require(failure["error"] as? [String: Any])
            #expect(error["kind"] as? String == "network", "\(error)")
            #expect((error["message"] as? String)?.contains("empty") == true, "\(error)")
            #expect(try await cli.run(["cache", "path", url]).status == 1, "\(coding): nothing stored")
        }
        let plain = try await cli.run(["--any", "--json", server.url("/empty-plain")])
        #expect(plain.status == 0, "\(plain.stdout)")
        #expect(try HTTPCachingE2ETests.json(plain).first { $0["phase"] as? String == "success" }?["bytes"] as? Int == 0)
    }
}
