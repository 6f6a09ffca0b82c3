import Fetch
import Loader
import HTTPCaching
import Testing
import TestSupport

/// RFC 9111 §4.2.2: a response without explicit freshness but with
/// `Last-Modified` is fresh for 10 % of `Date − Last-Modified`, for the
/// heuristically cacheable statuses of RFC 9110 §15.1 (or with `public`).
/// `--no-heuristic` turns this off; `--default-ttl` covers responses with
/// neither, and `--default-ttl 0` makes them never fresh.
@Suite struct HeuristicFreshnessTests {
    static let dayOld: [(String, String)] = [("Last-Modified", httpDate(-86_400))]

    @Test func anImageModifiedADayAgoIsFreshForAboutTwoHours() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/day.png", headers: Self.dayOld)
        _ = await h.load("/day.png", LoaderHarness.noDefaultTTL)
        #expect(await h.load("/day.png", LoaderHarness.noDefaultTTL).source == .cache)
        let meta = try #require(try h.entry("/day.png")?.metadata)
        let lifetime = Freshness(defaultTTL: 0).lifetime(meta)
        #expect(!lifetime.explicit && abs(lifetime.seconds - 8_640) < 2)
        #expect(h.server.requestCount("/day.png") == 1)
    }

    @Test func noHeuristicRevalidatesAndTheDefaultTTLTakesOver() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/day.png", headers: Self.dayOld)
        _ = await h.load("/day.png")
        let off: (inout LoaderOptions) -> Void = { $0.freshness = Freshness(defaultTTL: 0, heuristic: false) }
        #expect(await h.load("/day.png", off).source == .revalidated)
        let offWithDefault: (inout LoaderOptions) -> Void = { $0.freshness = Freshness(defaultTTL: 3600, heuristic: false) }
        #expect(await h.load("/day.png", offWithDefault).source == .cache)
    }

    @Test func aJustModifiedImageIsFreshOnlyBriefly() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/new.png", headers: [("Last-Modified", httpDate(-10))])   // 1 s of freshness
        _ = await h.load("/new.png", LoaderHarness.noDefaultTTL)
        try await Task.sleep(nanoseconds: 1_500_000_000)
        #expect(await h.load("/new.png", LoaderHarness.noDefaultTTL).source == .revalidated)
    }

    @Test func neitherFreshnessNorLastModifiedUsesTheDefaultTTL() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/plain.png")
        _ = await h.load("/plain.png")
        #expect(await h.load("/plain.png").source == .cache)
        #expect(await h.load("/plain.png", LoaderHarness.noDefaultTTL).source == .revalidated)
    }

    @Test(arguments: [203, 204, 299])
    func heuristicsForOtherSuccessfulStatuses(_ status: Int) async throws {
        let h = try LoaderHarness()
        let body: [UInt8] = status == 204 ? [] : Array("text".utf8)
        h.server.route("/s", ScriptedResponse(status: status, headers: Self.dayOld, body: body))
        let any: (inout LoaderOptions) -> Void = { LoaderHarness.noDefaultTTL(&$0); $0.acceptAnyContent = true }
        #expect(await h.load("/s", any).source == .network)
        // 299 is not heuristically cacheable (RFC 9110 §15.1): it is asked again.
        #expect(await h.load("/s", any).source == (status == 299 ? .network : .cache))
    }

    @Test(arguments: [404, 405, 410, 414, 501])
    func heuristicallyCacheableErrorsAreRemembered(_ status: Int) async throws {
        let h = try LoaderHarness()
        h.server.route("/e.png", .status(status, headers: Self.dayOld, body: "no"))
        _ = await h.load("/e.png", LoaderHarness.noDefaultTTL)
        #expect(await h.load("/e.png", LoaderHarness.noDefaultTTL).error?.source == .cache)
        #expect(h.server.requestCount("/e.png") == 1)
    }

    @Test(arguments: [201, 202, 403, 502, 503, 504, 599])
    func otherStatusesAreNotCachedHeuristically(_ status: Int) async throws {
        let h = try LoaderHarness()
        h.server.route("/e", ScriptedResponse(status: status, headers: Self.dayOld, body: Array("body".utf8)))
        let any: (inout LoaderOptions) -> Void = { LoaderHarness.noDefaultTTL(&$0); $0.acceptAnyContent = true }
        _ = await h.load("/e", any)
        _ = await h.load("/e", any)
        #expect(h.server.requestCount("/e") == 2)
    }

    @Test func publicAllowsTheHeuristicForAnyStatus() async throws {
        let h = try LoaderHarness()
        h.server.route("/e", .status(599, headers: Self.dayOld + [("Cache-Control", "public")], body: "x"))
        _ = await h.load("/e", LoaderHarness.noDefaultTTL)
        #expect(await h.load("/e", LoaderHarness.noDefaultTTL).error?.source == .cache)
        #expect(h.server.requestCount("/e") == 1)
    }
}
