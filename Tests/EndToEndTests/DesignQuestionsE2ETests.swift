import Foundation
import Testing
import TestSupport

/// Session 22's open design questions about the command line, each decided
/// from SPEC.md (and RFC 9110/9111) and checked with the built binary.
@Suite struct DesignQuestionsE2ETests {
    static let png = FixtureSite.png

    static func json(_ result: ProcessResult) throws -> [[String: Any]] {
        try #require(CLI.jsonLines(result.stdout), "stdout: \(result.stdout)")
    }

    /// SPEC §5: `--retries N` retries N times, 429 and 503 included: a URL
    /// whose host keeps pushing back makes N + 1 requests, not N + 2 (the
    /// wait for the paused host is the retry, not a free extra attempt).
    @Test(arguments: [(429, 0), (503, 1), (503, 2)])
    func retriesCountEveryRequestAfterThePushback(status: Int, retries: Int) async throws {
        let server = try ScriptedServer()
        server.route("/busy.png", .status(status))
        let cli = try CLI()
        let result = try await cli.run([server.url("/busy.png"), "--retries", String(retries), "--json"])
        #expect(result.status == 1)
        let failure = try #require(try Self.json(result).first { $0["phase"] as? String == "failure" })
        #expect(failure["attempts"] as? Int == retries + 1, "\(failure)")
        #expect(server.requestCount("/busy.png") == retries + 1)
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
            let failure = try #require(try Self.json(result).first { $0["phase"] as? String == "failure" }, "\(coding)")
            let error = try #require(failure["error"] as? [String: Any])
            #expect(error["kind"] as? String == "network", "\(error)")
            #expect((error["message"] as? String)?.contains("empty") == true, "\(error)")
            #expect(try await cli.run(["cache", "path", url]).status == 1, "\(coding): nothing stored")
        }
        let plain = try await cli.run(["--any", "--json", server.url("/empty-plain")])
        #expect(plain.status == 0, "\(plain.stdout)")
        #expect(try Self.json(plain).first { $0["phase"] as? String == "success" }?["bytes"] as? Int == 0)
    }

    /// SPEC §3: "`-q` prints only failures". On a terminal that includes the
    /// progress bar, unless `--progress` asks for it.
    @Test func quietHidesTheProgressBarOnATerminal() async throws {
        let server = try ScriptedServer()
        server.route("/slow.png", ScriptedResponse.ok(Self.png).delayed(0.25))
        let cli = try CLI()
        let urls = (1...4).map { server.url("/slow.png?\($0)") }
        let quiet = try await cli.runInTerminal(["-q", "--jobs", "1"] + urls)
        #expect(quiet.status == 0)
        #expect(!quiet.stdout.contains("\u{1B}[K") && !quiet.stdout.contains(" URLs"), "\(quiet.stdout.debugDescription)")
        let asked = try await cli.runInTerminal(["-q", "--progress", "--jobs", "1"] + urls.map { $0 + "&again" })
        #expect(asked.stdout.contains("\u{1B}[K"), "--progress still draws it: \(asked.stdout.debugDescription)")
    }

    /// `-o FILE` directly in the cache directory is refused before any I/O,
    /// as `--output-dir` is: a file there could replace a cache entry (or be
    /// one: `-o "$(asyncfetch cache path URL)"`). A folder inside it is fine.
    @Test func outputFileInTheCacheDirectoryIsAUsageError() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let cli = try CLI()
        let url = server.url("/a.png")
        #expect(try await cli.run([url]).status == 0)
        let entry = try await cli.run(["cache", "path", url]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let requests = server.requestCount("/a.png")
        for file in [entry, cli.cacheDir + "/photo.png", cli.cacheDir + "/./photo.png"] {
            let result = try await cli.run([url, "-o", file, "--refresh"])
            #expect(result.status == 2, "\(file): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("is in the cache directory"), "\(result.stderr)")
        }
        #expect(server.requestCount("/a.png") == requests, "refused before any request")
        #expect(try Data(contentsOf: URL(fileURLWithPath: entry)) == Data(Self.png), "the entry is intact")
        #expect(!FileManager.default.fileExists(atPath: cli.cacheDir + "/photo.png"))
        try FileManager.default.createDirectory(atPath: cli.cacheDir + "/mine", withIntermediateDirectories: false)
        let inside = try await cli.run([url, "-o", cli.cacheDir + "/mine/photo.png"])
        #expect(inside.status == 0, "\(inside.stderr)")
    }

    /// RFC 9111 §4.1 with `Vary: Host`: the Host sent is the URL's
    /// authority unless `-H` replaces it, so naming that same value with
    /// `-H` is the same request (a hit), and another value is not.
    @Test func varyHostComparesTheHostSent() async throws {
        let server = try ScriptedServer()
        server.route("/v.png", .ok(Self.png, headers: [("Cache-Control", "max-age=3600"), ("Vary", "Host")]))
        let cli = try CLI()
        let url = server.url("/v.png")
        let authority = String(server.baseURL.dropFirst("http://".count))
        #expect(try await cli.run([url]).status == 0)
        let same = try await cli.run([url, "-H", "Host: \(authority.uppercased())", "--json"])
        #expect(try Self.json(same).first { $0["phase"] as? String == "success" }?["source"] as? String == "cache", "\(same.stdout)")
        let offline = try await cli.run([url, "-H", "Host: \(authority)", "--offline"])
        #expect(offline.status == 0, "\(offline.stdout)")
        #expect(server.requestCount("/v.png") == 1)
        let other = try await cli.run([url, "-H", "Host: other.example", "--offline"])
        #expect(other.status == 1 && other.stdout.contains("Vary: host"), "\(other.stdout)")
        let list = try await cli.run(["cache", "list", "--json"])
        #expect(list.status == 0)
    }

    /// SPEC §5: "URLs are printed with any password removed", the same way
    /// everywhere: a result line and `cache list` both show `user:***@`
    /// for a URL fetched with a password, and `user@` for one without.
    @Test func cacheListShowsAPasswordAsTheResultsDo() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        server.route("/b.png", .ok(Self.png))
        let cli = try CLI()
        let authority = String(server.baseURL.dropFirst("http://".count))
        let withPassword = "http://ann:s3cret@\(authority)/a.png"
        let userOnly = "http://bob@\(authority)/b.png"
        let fetched = try await cli.run([withPassword, userOnly])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout.contains("http://ann:***@\(authority)/a.png"))
        #expect(fetched.stdout.contains("http://bob@\(authority)/b.png"))
        let list = try await cli.run(["cache", "list"])
        #expect(list.stdout.contains("  http://ann:***@\(authority)/a.png\n"), "\(list.stdout)")
        #expect(list.stdout.contains("  http://bob@\(authority)/b.png\n"), "\(list.stdout)")
        let json = try await cli.run(["cache", "list", "--json"])
        let urls = try Self.json(json).compactMap { $0["url"] as? String }
        #expect(Set(urls) == ["http://ann:***@\(authority)/a.png", "http://bob@\(authority)/b.png"], "\(urls)")
        #expect(!list.stdout.contains("s3cret") && !json.stdout.contains("s3cret"))
        // Named as listed, the entry is not found, and the hint says why.
        let named = try await cli.run(["cache", "path", "http://ann:***@\(authority)/a.png"])
        #expect(named.status == 1 && named.stderr.contains("name the URL with it"), "\(named.stderr)")
    }
}
