import DiskCache
import Fetch
import ImageFormats
import Loader
import HTTPCaching
import TestSupport
import Testing

/// Remembered error statuses and `--stale-if-error`, against the scripted server.
@Suite struct NegativeAndStaleTests {
    @Test func a404WithMaxAgeIsReplayedFromTheCacheWithoutNetwork() async throws {
        let h = try LoaderHarness()
        h.server.route("/gone.png", .status(404, headers: [("Cache-Control", "max-age=600")], body: "no"))
        h.server.route("/gone-for-good.png", .status(410, headers: [("Expires", httpDate(600))], body: "gone"))
        let first = try #require(await h.load("/gone.png").error)
        #expect(first.kind == .http && first.status == 404 && first.source == nil)
        _ = await h.load("/gone-for-good.png")
        let replay = try #require(await h.load("/gone.png").error)
        #expect(replay.kind == .http && replay.status == 404 && replay.source == .cache)
        #expect(replay.message == "HTTP 404 Not Found")
        let gone = try #require(await h.load("/gone-for-good.png").error)
        #expect(gone.status == 410 && gone.source == .cache)
        #expect(h.server.requestCount("/gone.png") == 1 && h.server.requestCount("/gone-for-good.png") == 1)
        #expect(try h.entry("/gone.png")?.metadata.hasBody == false)
    }

    @Test func errorsWithoutExplicitFreshnessAreNeverStored() async throws {
        let h = try LoaderHarness()
        h.server.route("/missing.png", .status(404, body: "no"))
        h.server.route("/zero.png", .status(404, headers: [("Cache-Control", "max-age=0")], body: "no"))
        h.server.route("/nostore.png", .status(404, headers: [("Cache-Control", "no-store, max-age=600")], body: "no"))
        h.server.route("/forbidden.png", .status(403, headers: [("Last-Modified", httpDate(-86_400))], body: "no"))
        for path in ["/missing.png", "/zero.png", "/nostore.png", "/forbidden.png"] {
            _ = await h.load(path)
            #expect(await h.load(path).error?.source == nil, "\(path)")
            #expect(h.server.requestCount(path) == 2, "\(path)")
            #expect(try h.entry(path) == nil, "\(path)")
        }
    }

    @Test func aRememberedErrorIsAskedAgainWithRefreshAndReplacedBySuccess() async throws {
        let h = try LoaderHarness()
        h.server.route("/back.png", [
            .status(404, headers: [("Cache-Control", "max-age=600")], body: "no"),
            .ok(LoaderHarness.png),
        ])
        _ = await h.load("/back.png")
        #expect(await h.load("/back.png") { $0.refresh = true }.source == .network)
        #expect(await h.load("/back.png").source == .cache)
        #expect(h.server.requestCount("/back.png") == 2)
    }

    @Test func staleIfErrorServesTheStaleCopyWithAWarningWhenTheServerFails() async throws {
        let h = try LoaderHarness()
        h.server.route("/flaky.png", [
            .ok(LoaderHarness.png, headers: [("Cache-Control", "max-age=0")]),
            .status(503, body: "down"),
        ])
        let path = try #require(await h.load("/flaky.png").result?.path)
        let failure = try #require(await h.load("/flaky.png").error)
        #expect(failure.kind == .http && failure.status == 503)
        let stale = try #require(await h.load("/flaky.png") { $0.staleIfError = true }.result)
        #expect(stale.source == .stale && stale.path == path && stale.format == .png)
        #expect(stale.warning?.contains("HTTP 503") == true)
        #expect(stale.warning?.contains("stale") == true)
    }

    @Test func staleIfErrorServesTheStaleCopyWhenTheServerIsGone() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/a.png", headers: [("Cache-Control", "max-age=0")])
        _ = await h.load("/a.png")
        h.server.stop()
        #expect(await h.load("/a.png").error?.kind == .connect)
        let stale = try #require(await h.load("/a.png") { $0.staleIfError = true }.result)
        #expect(stale.source == .stale)
        #expect(stale.warning?.contains("could not connect") == true)
    }

    @Test func staleIfErrorNeverServesMustRevalidateOrNoCacheEntries() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/mr.png", headers: [("Cache-Control", "max-age=0, must-revalidate")])
        h.server.revalidating("/nc.png", headers: [("Cache-Control", "no-cache")])
        _ = await h.load("/mr.png")
        _ = await h.load("/nc.png")
        h.server.stop()
        let staleIfError: (inout LoaderOptions) -> Void = { $0.staleIfError = true }
        let mustRevalidate = try #require(await h.load("/mr.png", staleIfError).error)
        let noCache = try #require(await h.load("/nc.png", staleIfError).error)
        #expect(mustRevalidate.kind == .connect && noCache.kind == .connect)
        // The failure says a stored copy was there and why it was not served, not only "could not connect".
        #expect(mustRevalidate.message.hasSuffix("; the stored copy was not served (--stale-if-error): the server marked it must-revalidate"),
                "\(mustRevalidate.message)")
        #expect(noCache.message.hasSuffix("the server marked it no-cache"), "\(noCache.message)")
        #expect(await h.load("/mr.png").error?.message.contains("stored copy") == false, "without --stale-if-error: nothing to explain")
    }

    @Test func staleIfErrorDoesNotHideA404() async throws {
        let h = try LoaderHarness()
        h.server.route("/removed.png", [.ok(LoaderHarness.png, headers: [("Cache-Control", "max-age=0")]), .status(404)])
        _ = await h.load("/removed.png")
        #expect(await h.load("/removed.png") { $0.staleIfError = true }.error?.status == 404)
    }

    /// RFC 5861 §4: a `stale-if-error=N` window, from the response or the
    /// request (`-H`), limits `--stale-if-error`; past it the error stands.
    @Test func staleIfErrorWindowsLimitServingStale() async throws {
        let h = try LoaderHarness()
        for (path, window) in [("/short.png", "0"), ("/long.png", "600")] {
            h.server.route(path, [.ok(LoaderHarness.png, headers: [("Cache-Control", "max-age=0, stale-if-error=\(window)")]),
                                  .status(500)])
            _ = await h.load(path)
        }
        h.server.route("/plain.png", [.ok(LoaderHarness.png, headers: [("Cache-Control", "max-age=0")]), .status(500)])
        _ = await h.load("/plain.png")
        try await Task.sleep(nanoseconds: 1_100_000_000)
        let staleIfError: (inout LoaderOptions) -> Void = { $0.staleIfError = true }
        #expect(await h.load("/short.png", staleIfError).error?.status == 500)
        #expect(await h.load("/long.png", staleIfError).source == .stale)
        let requestWindow: (inout LoaderOptions) -> Void = {
            $0.staleIfError = true
            $0.fetch.headers.add(name: "Cache-Control", value: "stale-if-error=0")
        }
        #expect(await h.load("/plain.png", requestWindow).error?.status == 500)
        #expect(await h.load("/plain.png", staleIfError).source == .stale)
    }
}
