import DiskCache
import Fetch
import ImageFormats
import Loader
import HTTPCaching
import TestSupport
import Testing

/// RFC 9111 §4.2 freshness, each rule as a user sees it: run the loader
/// twice against the scripted server and count what reached the network.
@Suite struct FreshnessRulesTests {
    @Test func maxAgeMakesTheSecondRunACacheHitWithoutNetwork() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/a.png", headers: [("Cache-Control", "max-age=600")])
        #expect(await h.load("/a.png").source == .network)
        #expect(await h.load("/a.png").source == .cache)
        #expect(h.server.requestCount("/a.png") == 1)
    }

    @Test func theFirstMaxAgeWins() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/long-first.png", headers: [("Cache-Control", "max-age=600"), ("Cache-Control", "max-age=0")])
        h.server.revalidating("/zero-first.png", headers: [("Cache-Control", "max-age=0, max-age=600")])
        _ = await h.load("/long-first.png")
        _ = await h.load("/zero-first.png")
        #expect(await h.load("/long-first.png").source == .cache)
        #expect(await h.load("/zero-first.png").source == .revalidated)
        #expect(h.server.requestCount("/long-first.png") == 1)
        #expect(h.server.conditionalRequests("/zero-first.png") == 1)
    }

    @Test func anInvalidMaxAgeMeansStaleEvenWithAFutureExpires() async throws {
        let h = try LoaderHarness()
        for (path, value) in [("/abc.png", "max-age=abc"), ("/neg.png", "max-age=-5"), ("/empty.png", "max-age=")] {
            h.server.revalidating(path, headers: [("Cache-Control", value), ("Expires", httpDate(3600))])
            #expect(await h.load(path).source == .network)
            #expect(await h.load(path).source == .revalidated, "\(value)")
        }
    }

    @Test func expiresCountsFromTheServersDate() async throws {
        let h = try LoaderHarness()
        // The server's clock is an hour ahead: Expires is ten minutes after its Date, so fresh.
        h.server.revalidating("/skewed.png", headers: [("Date", httpDate(3600)), ("Expires", httpDate(4200))])
        // Expires before Date: already stale, whatever the local clock says.
        h.server.revalidating("/before.png", headers: [("Date", httpDate(3600)), ("Expires", httpDate(3000))])
        // An invalid Expires ("0") means already expired.
        h.server.revalidating("/zero.png", headers: [("Expires", "0")])
        for path in ["/skewed.png", "/before.png", "/zero.png"] { _ = await h.load(path) }
        #expect(await h.load("/skewed.png").source == .cache)
        #expect(await h.load("/before.png").source == .revalidated)
        #expect(await h.load("/zero.png").source == .revalidated)
    }

    @Test func withoutAValidDateExpiresCountsFromTheReceiveTime() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/future.png", headers: [("Date", "not a date"), ("Expires", httpDate(600))])
        h.server.revalidating("/past.png", headers: [("Date", "not a date"), ("Expires", httpDate(-10))])
        _ = await h.load("/future.png")
        _ = await h.load("/past.png")
        #expect(await h.load("/future.png").source == .cache)
        #expect(await h.load("/past.png").source == .revalidated)
    }

    @Test func theAgeHeaderCountsAgainstMaxAge() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/young.png", headers: [("Cache-Control", "max-age=600"), ("Age", "500")])
        h.server.revalidating("/old.png", headers: [("Cache-Control", "max-age=600"), ("Age", "600")])
        h.server.revalidating("/list.png", headers: [("Cache-Control", "max-age=600"), ("Age", "700, 1")])
        h.server.revalidating("/bogus.png", headers: [("Cache-Control", "max-age=600"), ("Age", "soon")])
        for path in ["/young.png", "/old.png", "/list.png", "/bogus.png"] { _ = await h.load(path) }
        #expect(await h.load("/young.png").source == .cache)
        #expect(await h.load("/old.png").source == .revalidated)
        #expect(await h.load("/list.png").source == .revalidated, "the first member of a list counts")
        #expect(await h.load("/bogus.png").source == .cache, "an invalid Age is ignored")
    }

    @Test func noStoreIsNeverStoredButTheLoadSucceeds() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/secret.png", headers: [("Cache-Control", "no-store, max-age=600")])
        let first = try #require(await h.load("/secret.png").result)
        #expect(first.source == .network && first.path == nil && first.format == .png && first.width == 64)
        #expect(try h.entry("/secret.png") == nil)
        #expect(await h.load("/secret.png").source == .network)
        #expect(h.server.requestCount("/secret.png") == 2)
        #expect(h.server.conditionalRequests("/secret.png") == 0)
        #expect(h.temporaryFiles.isEmpty)
    }

    @Test func noStoreDropsAnOlderStoredEntry() async throws {
        let h = try LoaderHarness()
        h.server.route("/turns.png", [
            .ok(LoaderHarness.png, headers: [("Cache-Control", "max-age=0")]),
            .ok(LoaderHarness.png, headers: [("Cache-Control", "no-store")]),
        ])
        _ = await h.load("/turns.png")
        #expect(try h.entry("/turns.png") != nil)
        #expect(await h.load("/turns.png").source == .network)
        #expect(try h.entry("/turns.png") == nil)
    }

    @Test func noCacheIsStoredAndRevalidatedBeforeEveryUse() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/nc.png", headers: [("Cache-Control", "no-cache, max-age=600")])
        #expect(await h.load("/nc.png").source == .network)
        #expect(try h.entry("/nc.png") != nil)
        #expect(await h.load("/nc.png").source == .revalidated)
        #expect(await h.load("/nc.png").source == .revalidated)
        #expect(h.server.conditionalRequests("/nc.png") == 2)
    }

    @Test func noExplicitFreshnessUsesTheDefaultTTL() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/plain.png")
        _ = await h.load("/plain.png")
        #expect(await h.load("/plain.png").source == .cache)
        #expect(await h.load("/plain.png") { $0.freshness = Freshness(defaultTTL: 0) }.source == .revalidated)
        #expect(h.server.requestCount("/plain.png") == 2)
    }

    @Test func maxAgeOverridesTheServerBothWays() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/short.png", headers: [("Cache-Control", "no-cache, max-age=0")])
        h.server.revalidating("/long.png", headers: [("Cache-Control", "max-age=600")])
        _ = await h.load("/short.png")
        _ = await h.load("/long.png")
        let long: (inout LoaderOptions) -> Void = { $0.freshness = Freshness(maxAgeOverride: 3600) }
        let zero: (inout LoaderOptions) -> Void = { $0.freshness = Freshness(maxAgeOverride: 0) }
        #expect(await h.load("/short.png", long).source == .cache)
        #expect(await h.load("/long.png", zero).source == .revalidated)
    }

    @Test func refreshContactsTheServerForAFreshEntry() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/fresh.png", headers: [("Cache-Control", "max-age=600")])
        _ = await h.load("/fresh.png")
        #expect(await h.load("/fresh.png") { $0.refresh = true }.source == .revalidated)
        #expect(h.server.conditionalRequests("/fresh.png") == 1)
    }

    @Test func offlineNeverTouchesTheNetwork() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/fresh.png", headers: [("Cache-Control", "max-age=600")])
        h.server.revalidating("/stale.png", headers: [("Cache-Control", "max-age=0, must-revalidate")])
        _ = await h.load("/fresh.png")
        _ = await h.load("/stale.png")
        let before = h.server.totalRequests
        let offline: (inout LoaderOptions) -> Void = { $0.offline = true }
        #expect(await h.load("/fresh.png", offline).source == .cache)
        #expect(await h.load("/stale.png", offline).source == .stale)
        guard case .empty(.notCached) = await h.load("/never.png", offline) else {
            Issue.record("an offline miss must be empty/not-cached")
            return
        }
        #expect(h.server.totalRequests == before)
    }
}
