import Fetch
import Loader
import Testing
import TestSupport

/// RFC 9111 §5.2.2.3: with `must-understand`, a response is stored only if
/// its status code is understood, and then `no-store` is ignored.
@Suite struct MustUnderstandTests {
    @Test func anUnderstoodStatusIsStoredDespiteNoStore() async throws {
        let h = try LoaderHarness()
        let cc = ("Cache-Control", "max-age=600, must-understand, no-store")
        h.server.revalidating("/mu.png", headers: [cc])
        h.server.route("/gone.png", .status(404, headers: [cc], body: "no"))
        #expect(await h.load("/mu.png").result?.path != nil)
        #expect(await h.load("/mu.png").source == .cache)
        _ = await h.load("/gone.png")
        #expect(await h.load("/gone.png").error?.source == .cache)
        #expect(h.server.requestCount("/mu.png") == 1 && h.server.requestCount("/gone.png") == 1)
    }

    @Test func anUnknownStatusIsNeverStored() async throws {
        let h = try LoaderHarness()
        h.server.route("/odd", ScriptedResponse(status: 299, headers: [("Cache-Control", "max-age=600, must-understand")],
                                                body: Array("odd".utf8)))
        h.server.route("/odd-error", .status(599, headers: [("Cache-Control", "max-age=600, must-understand")]))
        let any: (inout LoaderOptions) -> Void = { $0.acceptAnyContent = true }
        let first = try #require(await h.load("/odd", any).result)
        #expect(first.path == nil)   // delivered, not kept
        #expect(await h.load("/odd", any).source == .network)
        _ = await h.load("/odd-error")
        #expect(await h.load("/odd-error").error?.source == nil)
        #expect(h.server.requestCount("/odd") == 2 && h.server.requestCount("/odd-error") == 2)
    }

    @Test func withoutMustUnderstandNoStoreWins() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/ns.png", headers: [("Cache-Control", "max-age=600, no-store")])
        #expect(await h.load("/ns.png").result?.path == nil)
        #expect(await h.load("/ns.png").source == .network)
    }
}
