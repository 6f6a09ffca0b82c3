import Foundation
import Testing
import TestSupport

/// docs/output.md: "A control character in a URL, a server's message or
/// content type … is shown as an escape (`\x1B`, `\x07`), so a line can
/// never move the cursor, recolour or retitle the terminal." The result
/// lines did; the cache commands' lines and the remote tier's warnings
/// printed such text raw. And an empty `Content-Type:` header is no type.
@Suite struct ShownTextE2ETests {
    /// Retitles the terminal, then turns its text red.
    static let hostile = "\u{1B}]0;pwned\u{07}\u{1B}[31m"
    static let shown = "\\x1B]0;pwned\\x07\\x1B[31m"

    static func raw(_ text: String) -> Bool { text.utf8.contains(0x1B) || text.utf8.contains(0x07) }

    /// `cache list` printed a stored `Content-Type` as the server sent it.
    @Test func cacheListShowsAServersContentTypeWithEscapes() async throws {
        let server = try ScriptedServer()
        server.route("/t.png", .ok(FixtureSite.png, contentType: "image/png" + Self.hostile))
        let cli = try CLI()
        #expect(try await cli.run([server.url("/t.png")]).status == 0)
        let list = try await cli.run(["cache", "list"])
        #expect(list.status == 0)
        #expect(!Self.raw(list.stdout), "\(list.stdout.debugDescription)")
        #expect(list.stdout.contains("image/png" + Self.shown + "  " + server.url("/t.png")), "\(list.stdout.debugDescription)")
        let json = try #require(CLI.jsonLines(try await cli.run(["cache", "list", "--json"]).stdout)?.first)
        #expect(json["contentType"] as? String == "image/png" + Self.hostile, "JSON keeps the value exact")
    }

    /// `cache path` and `cache rm` echoed a listed URL raw, on stdout and stderr.
    @Test func cachePathAndRmShowAListedURLWithEscapes() async throws {
        let cli = try CLI()
        let url = "http://127.0.0.1:1/a" + Self.hostile + ".png"
        let list = cli.cache.path + "/urls.txt"
        try (url + "\n").write(toFile: list, atomically: true, encoding: .utf8)
        for command in [["cache", "path", url], ["cache", "rm", url], ["cache", "rm", "-i", list]] {
            let result = try await cli.run(command)
            #expect(result.status == 1, "\(command)")
            #expect(!Self.raw(result.stdout) && !Self.raw(result.stderr), "\(command): \(result.stdout.debugDescription) \(result.stderr.debugDescription)")
            #expect(result.stderr.contains("http://127.0.0.1:1/a" + Self.shown + ".png"), "\(command): \(result.stderr.debugDescription)")
        }
    }

    /// The tier's first line is quoted when an object is not asyncfetch's:
    /// those are the tier's bytes, and they reached the terminal raw.
    @Test func aRemoteObjectsBytesAreShownWithEscapesInTheWarning() async throws {
        let origin = try ScriptedServer()
        origin.route("/r.png", .ok(FixtureSite.png))
        let url = origin.url("/r.png")
        let tier = try ScriptedServer()
        let foreign = ScriptedResponse.ok(Array((Self.hostile + "\r\nmore").utf8), contentType: "application/octet-stream")
        for listed in [url, url + "?pull"] { tier.route("/tier/" + (try CLI.md5sum(listed)), foreign) }
        let cli = try CLI()
        let fetched = try await cli.run(["--remote-cache", tier.url("/tier/"), url])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        let pulled = try await cli.run(["cache", "pull", "-v", "--remote-cache", tier.url("/tier/"), url + "?pull"])
        #expect(pulled.status == 1)
        for result in [fetched, pulled] {
            #expect(result.stderr.contains("not an asyncfetch object (header '" + Self.shown + "\\x0D')"), "\(result.stderr.debugDescription)")
            #expect(!Self.raw(result.stderr) && !result.stderr.contains("\r"), "\(result.stderr.debugDescription)")
        }
    }

    /// `Content-Type:` with no value gave `(network, 1 B, )`, `[HTTP/1.1
    /// 200, , …]`, `"contentType":""` and "the server labelled it " with
    /// nothing after it; a missing header gave none of these.
    @Test func anEmptyContentTypeIsNoType() async throws {
        let server = try ScriptedServer()
        server.route("/image", ScriptedResponse(status: 200, headers: [("Content-Type", "")], body: FixtureSite.png))
        server.route("/text", ScriptedResponse(status: 200, headers: [("Content-Type", "")], body: Array("hello".utf8)))
        let cli = try CLI()
        let image = server.url("/image"), text = server.url("/text")
        let verbose = try await cli.run(["-v", image])
        #expect(verbose.status == 0)
        #expect(verbose.stdout.contains("(network, 153 B, png 64x48)  [HTTP/1.1 200, attempts 1, "), "\(verbose.stdout)")
        let refused = try await cli.run([text])
        #expect(refused.stdout.hasSuffix("not an image: the body is in no supported image format\n"), "\(refused.stdout.debugDescription)")
        let any = try await cli.run(["--any", text])
        #expect(any.stdout.contains("(network, 5 B)"), "\(any.stdout)")
        let json = try #require(CLI.jsonLines(try await cli.run(["--json", image, text]).stdout))
        for line in json where line["phase"] as? String == "success" {
            #expect(line["contentType"] == nil, "\(line)")
        }
        let list = try await cli.run(["cache", "list"])
        #expect(list.stdout.split(separator: "\n").allSatisfy { $0.contains("  -  ") }, "\(list.stdout)")
        for line in try #require(CLI.jsonLines(try await cli.run(["cache", "list", "--json"]).stdout)) {
            #expect(line["contentType"] == nil, "\(line)")
        }
    }
}
