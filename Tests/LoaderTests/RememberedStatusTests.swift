import Fetch
import Loader
import Testing
import TestSupport

/// RFC 9111 §3: any final status may be stored when it has explicit
/// freshness. asyncfetch remembers it without its body and replays it as a
/// `failure` from `cache` while fresh; it is never served stale.
@Suite struct RememberedStatusTests {
    @Test(arguments: [400, 403, 499, 500, 502, 503, 504, 599])
    func aFreshErrorStatusIsReplayedFromTheCache(_ status: Int) async throws {
        let h = try LoaderHarness()
        h.server.route("/s.png", .status(status, headers: [("Cache-Control", "max-age=600")], body: "error page"))
        let first = try #require(await h.load("/s.png", LoaderHarness.noDefaultTTL).error)
        #expect(first.status == status && first.source == nil)
        let replay = try #require(await h.load("/s.png", LoaderHarness.noDefaultTTL).error)
        #expect(replay.kind == .http && replay.status == status && replay.source == .cache)
        #expect(h.server.requestCount("/s.png") == 1)
        #expect(try h.entry("/s.png")?.metadata.hasBody == false)
    }

    @Test func aStaleErrorStatusIsNeverServed() async throws {
        let h = try LoaderHarness()
        // The template of the suite's `status-*-stale`: Expires in the past, Last-Modified long ago.
        let stale: [(String, String)] = [("Expires", httpDate(-5000)), ("Last-Modified", httpDate(-100_000))]
        h.server.route("/old.png", .status(503, headers: stale, body: "down"))
        h.server.route("/old404.png", .status(404, headers: stale, body: "no"))
        for path in ["/old.png", "/old404.png"] {
            _ = await h.load(path, LoaderHarness.noDefaultTTL)
            #expect(await h.load(path, LoaderHarness.noDefaultTTL).error?.source == nil, "\(path)")
            #expect(await h.load(path) { $0.offline = true }.name == "empty", "\(path)")
            #expect(h.server.requestCount(path) == 2, "\(path)")
        }
    }

    @Test func aRememberedErrorBecomesStaleAndIsAskedAgain() async throws {
        let h = try LoaderHarness()
        // max-age=2, not 1: the server's `Date` has whole seconds, so the error is up to a
        // second old when it arrives (RFC 9111 §4.2.3's apparent age), and with max-age=1 a
        // second load a few milliseconds later found it stale now and then (a loaded machine).
        h.server.route("/brief.png", [.status(500, headers: [("Cache-Control", "max-age=2")]), .ok(LoaderHarness.png)])
        _ = await h.load("/brief.png")
        #expect(await h.load("/brief.png").error?.source == .cache)
        try await Task.sleep(nanoseconds: 3_100_000_000)
        #expect(await h.load("/brief.png") { $0.offline = true }.name == "empty")
        #expect(await h.load("/brief.png").source == .network)
        #expect(h.server.requestCount("/brief.png") == 2)
    }

    @Test func noStoreNoCacheAndAlreadyStaleErrorsAreNotRemembered() async throws {
        let h = try LoaderHarness()
        h.server.route("/ns.png", .status(500, headers: [("Cache-Control", "max-age=600, no-store")]))
        h.server.route("/nc.png", .status(500, headers: [("Cache-Control", "max-age=600, no-cache")]))
        h.server.route("/aged.png", .status(500, headers: [("Cache-Control", "max-age=60"), ("Age", "120")]))
        for path in ["/ns.png", "/nc.png", "/aged.png"] {
            _ = await h.load(path)
            #expect(await h.load(path).error?.source == nil, "\(path)")
            #expect(try h.entry(path) == nil, "\(path)")
        }
    }

    /// A remembered error does not turn a non-image into a success, and an
    /// image still needs its body: a fresh 2xx that is not an image is a
    /// `not-an-image` failure every time, and nothing is stored.
    @Test func anImageBodyIsStillRequiredForSuccess() async throws {
        let h = try LoaderHarness()
        h.server.route("/text.png", .ok(Array("hello".utf8), contentType: "text/plain", headers: [("Cache-Control", "max-age=600")]))
        #expect(await h.load("/text.png").error?.kind == .notAnImage)
        #expect(await h.load("/text.png").error?.kind == .notAnImage)
        #expect(h.server.requestCount("/text.png") == 2)
    }

    /// `--stale-if-error` serves a stored image over a fresh 503, and the
    /// 503 does not replace the image.
    @Test func staleIfErrorKeepsTheImageOverARememberableError() async throws {
        let h = try LoaderHarness()
        h.server.route("/flaky.png", [
            .ok(LoaderHarness.png, headers: [("Cache-Control", "max-age=0")]),
            .status(503, headers: [("Cache-Control", "max-age=600")]),
        ])
        _ = await h.load("/flaky.png")
        let stale = try #require(await h.load("/flaky.png") { $0.staleIfError = true }.result)
        #expect(stale.source == .stale)
        #expect(try h.entry("/flaky.png")?.metadata.hasBody == true)
    }
}
