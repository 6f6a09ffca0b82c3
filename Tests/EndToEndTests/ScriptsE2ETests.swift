import Foundation
import Glibc
import Testing
import TestSupport

/// What scripts rely on (issue 16, item 8): `cache path` and `cache rm`
/// answer one line per URL in order and take `-i` and `--json`; JSON
/// successes carry `effectiveUrl` and the `reason` of a stale copy; the
/// summary says which signal stopped the run.
@Suite struct ScriptsE2ETests {
    let server: ScriptedServer
    let cli: CLI

    init() throws {
        (server, cli) = try FixtureSite.start()
    }

    @Test func cachePathAndRmAnswerOneLinePerURLInOrder() throws {
        let a = server.url("/images/red-64x48.png"), b = server.url("/images/anim-33x17.gif")
        let missing = server.url("/images/never.png")
        #expect(try cli.run([a, b]).status == 0)
        let pathA = cli.cacheDir + "/" + (try CacheE2E.key(a)), pathB = cli.cacheDir + "/" + (try CacheE2E.key(b))

        let path = try cli.run(["cache", "path", b, missing, "not a url", a])
        #expect(path.status == 1)
        #expect(path.stdout == "\(pathB)\n-\n-\n\(pathA)\n", "\(path.stdout)")
        #expect(path.stderr.contains("\(missing): not cached") && path.stderr.contains("not a url: invalid URL"))

        let list = try cli.cache.write("list.txt", Array("# mine\n\(missing)\n\n\(a)\n".utf8))
        let json = try cli.run(["cache", "path", "--json", "-i", list, b])
        let objects = try #require(CLI.jsonLines(json.stdout))
        #expect(objects.map { $0["url"] as? String } == [b, missing, a], "arguments first, then the list")
        #expect(objects.map { $0["cached"] as? Bool } == [true, false, true])
        #expect(objects[0]["path"] as? String == pathB)
        #expect(objects[1]["reason"] as? String == "not-cached" && objects[1]["path"] == nil)

        let stdinList = try cli.run(["cache", "rm", "--json", "-i", "-"], stdin: Array("\(a)\n\(missing)\n".utf8))
        #expect(stdinList.status == 1)
        let removed = try #require(CLI.jsonLines(stdinList.stdout))
        #expect(removed.map { $0["removed"] as? Bool } == [true, false])
        #expect(removed[1]["reason"] as? String == "not-cached")
        let rm = try cli.run(["cache", "rm", b, a])
        #expect(rm.stdout == "removed  \(b)\nabsent   \(a)\n", "\(rm.stdout)")
    }

    @Test func successesCarryEffectiveURLAndStaleReason() throws {
        server.route("/moved.png", .redirect(to: "/images/red-64x48.png"))
        let moved = server.url("/moved.png")
        let result = try cli.run(["--json", moved])
        let success = try #require(CLI.jsonLines(result.stdout)?.first { $0["phase"] as? String == "success" })
        #expect(success["effectiveUrl"] as? String == server.url("/images/red-64x48.png"))
        let direct = try cli.run(["--json", "--refresh", server.url("/images/anim-33x17.gif")])
        let plain = try #require(CLI.jsonLines(direct.stdout)?.first { $0["phase"] as? String == "success" })
        #expect(plain["effectiveUrl"] == nil, "no redirect, no effectiveUrl")

        // A stored entry that is stale: --offline serves it with reason "offline".
        let png = FixtureSite.png
        server.route("/short.png", [ScriptedResponse.ok(png, headers: [("Cache-Control", "max-age=1")]),
                                    ScriptedResponse.status(503)])
        let short = server.url("/short.png")
        #expect(try cli.run([short]).status == 0)
        Thread.sleep(forTimeInterval: 1.2)
        let offline = try cli.run(["--json", "--offline", short])
        let stale = try #require(CLI.jsonLines(offline.stdout)?.first)
        #expect(stale["source"] as? String == "stale" && stale["reason"] as? String == "offline", "\(offline.stdout)")
        let afterError = try cli.run(["--json", "--stale-if-error", "--retries", "0", short])
        let served = try #require(CLI.jsonLines(afterError.stdout)?.first { $0["phase"] as? String == "success" }, "\(afterError.stdout)")
        #expect(served["source"] as? String == "stale" && served["reason"] as? String == "stale-if-error")
    }

    /// A failure after redirects names where it failed (`effectiveUrl`, and
    /// `-v`'s detail): the URL asked for answered with a redirect, not the error.
    @Test func failuresAfterRedirectsCarryEffectiveURL() throws {
        server.route("/gone.png", .redirect(to: "/moved/gone.png"))
        server.route("/moved/gone.png", .status(404))
        server.route("/html.png", .redirect(to: "/page.html"))
        server.route("/page.html", .ok(Array("<html>hello</html>".utf8), headers: [("Content-Type", "text/html")]))
        let closed = try ScriptedServer()
        let deadURL = closed.url("/nowhere.png")
        closed.stop()
        server.route("/dead.png", .redirect(to: deadURL))
        let urls = ["/gone.png", "/html.png", "/dead.png", "/missing.png"].map(server.url)
        let result = try cli.run(["--json", "--retries", "0"] + urls)
        let failures = try #require(CLI.jsonLines(result.stdout)?.filter { $0["phase"] as? String == "failure" })
        let reached = Dictionary(uniqueKeysWithValues: failures.map { ($0["url"] as? String ?? "", $0["effectiveUrl"] as? String) })
        #expect(reached[urls[0]] == server.url("/moved/gone.png"), "\(result.stdout)")
        #expect(reached[urls[1]] == server.url("/page.html"), "not an image, where it came from")
        #expect(reached[urls[2]] == deadURL, "the refused connection was the redirect's target")
        #expect(reached[urls[3]] == .some(nil), "no redirect, no effectiveUrl: \(result.stdout)")
        let verbose = try cli.run(["-v", "--retries", "0", urls[0]])
        #expect(verbose.stdout.contains("after redirects, at \(server.url("/moved/gone.png"))"), "\(verbose.stdout)")
    }

    @Test func theSummaryNamesTheSignalThatStoppedTheRun() async throws {
        server.route("/hang.png", ScriptedResponse.ok([0x89]).delayed(30))
        let child = try startProcess(CLI.binary, ["--json", "--cache-dir", cli.cacheDir, server.url("/hang.png")])
        // The run is under way once the server has the request (a fixed
        // sleep raced a start-up slowed by load: SIGTERM came before the
        // handler and the process died of it).
        #expect(server.waitForRequests("/hang.png", timeout: 20))
        child.sendSignal(SIGTERM)
        let result = child.wait()
        #expect(result.status == 143)
        let summary = try #require(CLI.jsonLines(result.stdout)?.last?["summary"] as? [String: Any])
        #expect(summary["interrupted"] as? String == "SIGTERM")
    }
}
