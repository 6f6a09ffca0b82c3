import Foundation
import Testing
import TestSupport

/// The first slice, end to end: the built binary against a scripted server.
@Suite struct SpineTests {
    @Test func storesTheOriginBytesAtTheMd5PathAndServesTheSecondRunFromCache() throws {
        let (server, cli) = try FixtureSite.start()
        let url = server.url("/images/red-64x48.png")

        let first = try cli.run([url])
        #expect(first.status == 0, "\(first.stderr)")
        let expectedPath = cli.cacheDir + "/" + (try CLI.md5sum(url))
        #expect(first.stdout.hasPrefix("success  \(url)  \(expectedPath)  (network"))
        #expect(first.stdout.contains("png 64x48"))
        let origin = try Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/images/red-64x48.png"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: expectedPath)) == origin)

        let path = try cli.run(["cache", "path", url])
        #expect(path.status == 0)
        #expect(path.stdout == expectedPath + "\n")

        let requestsBefore = server.totalRequests
        let second = try cli.run([url, "--json"])
        #expect(second.status == 0)
        let lines = try #require(CLI.jsonLines(second.stdout))
        #expect(lines.count == 2)
        #expect(lines.first?["phase"] as? String == "success")
        #expect(lines.first?["source"] as? String == "cache")
        #expect(lines.first?["path"] as? String == expectedPath)
        #expect((lines.last?["summary"] as? [String: Any])?["cache"] as? Int == 1)
        #expect(server.totalRequests == requestsBefore, "a fresh hit must not touch the network")
    }

    @Test func offlineReportsEmptyForAnUncachedURLAndExits1() throws {
        let (server, cli) = try FixtureSite.start()
        let cached = server.url("/images/anim-33x17.gif")
        #expect(try cli.run([cached]).status == 0)
        let requestsBefore = server.totalRequests
        let never = server.url("/images/bitmap-30x20.bmp")
        let result = try cli.run(["--offline", "--json", cached, never])
        #expect(result.status == 1)
        let lines = try #require(CLI.jsonLines(result.stdout))
        #expect(lines.count == 3)
        #expect(lines[0]["phase"] as? String == "success")
        #expect(lines[0]["source"] as? String == "cache")
        #expect(lines[1]["url"] as? String == never)
        #expect(lines[1]["phase"] as? String == "empty")
        #expect(lines[1]["reason"] as? String == "not-cached")
        let summary = try #require(lines[2]["summary"] as? [String: Any])
        #expect(summary["total"] as? Int == 2 && summary["empty"] as? Int == 1)
        #expect(server.totalRequests == requestsBefore)
    }

    @Test func jsonShowsLoadingThenTerminalPhasesAndFailuresHaveKinds() throws {
        let (server, cli) = try FixtureSite.start()
        let image = server.url("/images/photo-120x80.jpg")
        let html = server.url("/not-an-image.html")
        let missing = server.url("/images/missing.png")
        let result = try cli.run(["--json", image, html, missing, "gopher://127.0.0.1/x", "not-a-url"])
        #expect(result.status == 1)
        let lines = try #require(CLI.jsonLines(result.stdout))
        func events(_ url: String) -> [[String: Any]] { lines.filter { $0["url"] as? String == url } }
        #expect(events(image).map { $0["phase"] as? String } == ["loading", "success"])
        #expect(events(image).last?["width"] as? Int == 120 && events(image).last?["height"] as? Int == 80)
        #expect(events(image).last?["format"] as? String == "jpeg")
        #expect((events(html).last?["error"] as? [String: Any])?["kind"] as? String == "not-an-image")
        let notFound = try #require(events(missing).last?["error"] as? [String: Any])
        #expect(notFound["kind"] as? String == "http" && notFound["status"] as? Int == 404)
        #expect(notFound["message"] as? String == "HTTP 404 Not Found")
        #expect((events("gopher://127.0.0.1/x").last?["error"] as? [String: Any])?["kind"] as? String == "unsupported-scheme")
        #expect((events("not-a-url").last?["error"] as? [String: Any])?["kind"] as? String == "invalid-url")
        #expect(lines.last?["summary"] != nil)
        // The HTML page must not have been stored.
        let htmlPath = cli.cacheDir + "/" + (try CLI.md5sum(html))
        #expect(!FileManager.default.fileExists(atPath: htmlPath))
    }

    @Test func usageErrorsExit2WithAReason() throws {
        let cli = try CLI()
        let none = try cli.run([])
        #expect(none.status == 2)
        #expect(none.stderr.contains("no URL given"))
        let unknown = try cli.run(["--no-such-flag", "http://127.0.0.1/x.png"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("--no-such-flag"))
        let badDir = try cli.run(["--cache-dir", "/proc/asyncfetch-cannot-exist", "http://127.0.0.1/x.png"])
        #expect(badDir.status == 2)
        #expect(badDir.stderr.contains("/proc/asyncfetch-cannot-exist"))
    }

    @Test func cacheDirPrintsTheResolvedDirectory() throws {
        let cli = try CLI()
        let result = try cli.run(["cache", "dir"])
        #expect(result.status == 0)
        #expect(result.stdout == cli.cacheDir + "\n")
        let explicit = try cli.run(["cache", "dir", "--cache-dir", cli.cache.path + "/other"])
        #expect(explicit.stdout == cli.cache.path + "/other\n")
    }
}
