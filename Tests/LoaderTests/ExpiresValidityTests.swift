import Fetch
import Loader
import Testing
import TestSupport

/// RFC 9111 §5.3 with RFC 9110 §5.6.7: an `Expires` that is not an HTTP
/// date, or that comes twice, means "already expired" — the next run goes
/// to the server although the date looks far in the future.
@Suite struct ExpiresValidityTests {
    @Test(arguments: [
        "Thu, 18 Aug 2050 02:01:18 UTC", "Thu, 18 Aug 50 02:01:18 GMT", "Thu 18 Aug 2050 02:01:18 GMT",
        "Thu, 18  Aug  2050 02:01:18 GMT", "Thu, 18-Aug-2050 02:01:18 GMT", "Thu, 18 Aug 2050 2:01:18 GMT",
    ])
    func anInvalidExpiresIsStale(_ expires: String) async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/e.png", headers: [("Expires", expires)])
        #expect(await h.load("/e.png", LoaderHarness.noDefaultTTL).source == .network)
        #expect(await h.load("/e.png", LoaderHarness.noDefaultTTL).source == .revalidated, "\(expires)")
        #expect(h.server.requestCount("/e.png") == 2)
    }

    @Test func aValidFutureExpiresIsFreshInEachForm() async throws {
        let h = try LoaderHarness()
        for (index, expires) in ["Thu, 18 Aug 2050 02:01:18 GMT", "Thursday, 18-Aug-50 02:01:18 GMT", "Thu Aug 18 02:01:18 2050"].enumerated() {
            h.server.revalidating("/ok\(index).png", headers: [("Expires", expires)])
            _ = await h.load("/ok\(index).png", LoaderHarness.noDefaultTTL)
            #expect(await h.load("/ok\(index).png", LoaderHarness.noDefaultTTL).source == .cache, "\(expires)")
        }
    }

    @Test func twoExpiresLinesAreInvalid() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/two.png", headers: [("Expires", httpDate(3600)), ("Expires", httpDate(3600))])
        _ = await h.load("/two.png", LoaderHarness.noDefaultTTL)
        #expect(await h.load("/two.png", LoaderHarness.noDefaultTTL).source == .revalidated)
    }

    /// An invalid `Date` is replaced by the receive time (RFC 9110 §6.6.1):
    /// `Expires` then counts from there, and the copy is fresh.
    @Test func anInvalidDateFallsBackToTheReceiveTime() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/d.png", headers: [("Date", "Thu, 18 Aug 2050 2:01:18 GMT"), ("Expires", httpDate(3600))])
        _ = await h.load("/d.png", LoaderHarness.noDefaultTTL)
        #expect(await h.load("/d.png", LoaderHarness.noDefaultTTL).source == .cache)
    }
}
