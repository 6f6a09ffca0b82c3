import DiskCache
import Fetch
import Foundation
import ImageFormats
import Loader
import TestSupport
import Testing

/// RFC 9111 §4.3 (validation) and §4.1 (Vary) against the scripted server.
@Suite(.timeLimit(.minutes(3))) struct RevalidationTests {
    @Test func sendsTheStoredETagAndTheLastModifiedValueVerbatim() async throws {
        let h = try LoaderHarness()
        // An obsolete (RFC 850) date: it must come back exactly as the server wrote it.
        let modified = "Sunday, 06-Nov-94 08:49:37 GMT"
        h.server.revalidating("/v.png", etag: "W/\"abc\"", lastModified: modified, headers: [("Cache-Control", "max-age=0")])
        _ = await h.load("/v.png")
        #expect(await h.load("/v.png").source == .revalidated)
        let conditional = try #require(h.server.requests("/v.png").last)
        #expect(conditional.header("If-None-Match") == "W/\"abc\"")
        #expect(conditional.header("If-Modified-Since") == modified)
        #expect(h.server.requests("/v.png").first?.header("If-None-Match") == nil)
    }

    /// A 304 that says `no-store` is not stored: the entry keeps its old,
    /// stale record, and the next load asks again. Its headers were merged,
    /// and a record left with no `max-age` fell to the default lifetime:
    /// the next 7 days were cache hits of a resource the server said not to store.
    @Test func aNoStore304IsNotMergedAndTheNextLoadAsksAgain() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/ns.png", headers: [("Cache-Control", "max-age=0")],
                              notModified: [("Cache-Control", "no-store")])
        #expect(await h.load("/ns.png").source == .network)
        let before = try #require(try h.entry("/ns.png"))
        #expect(await h.load("/ns.png").source == .revalidated)
        #expect(await h.load("/ns.png").source == .revalidated, "asked again, not a fresh hit")
        #expect(h.server.conditionalRequests("/ns.png") == 2)
        let after = try #require(try h.entry("/ns.png"))
        #expect(after.metadata.header("Cache-Control") == "max-age=0" && after.metadata.responseTime == before.metadata.responseTime)
    }

    /// A batch makes its revalidations' conditional requests as it reads
    /// the list (`prepareRevalidation`), not on the transfer loop: the
    /// same validators go out, and each 304 updates its own entry.
    @Test func aBatchSendsEachStoredValidatorAndRecordsEach304() async throws {
        let h = try LoaderHarness()
        let modified = "Sunday, 06-Nov-94 08:49:37 GMT"
        let paths = (0..<12).map { "/b\($0).png" }
        for (n, path) in paths.enumerated() {
            h.server.revalidating(path, etag: "W/\"e\(n)\"", lastModified: modified, headers: [("Cache-Control", "max-age=0")])
        }
        let loader = h.loader()
        for await _ in loader.batch(paths.map { h.server.url($0) }) {}
        let before = try paths.map { try #require(try h.entry($0)) }
        var sources: [String: Source] = [:]
        for await event in loader.batch(paths.map { h.server.url($0) }) {
            if let result = event.phase.result { sources[event.url] = result.source }
        }
        for (n, path) in paths.enumerated() {
            #expect(sources[h.server.url(path)] == .revalidated, "\(path)")
            let conditional = try #require(h.server.requests(path).last)
            #expect(conditional.header("If-None-Match") == "W/\"e\(n)\"")
            #expect(conditional.header("If-Modified-Since") == modified)
            let after = try #require(try h.entry(path))
            #expect(after.metadata.responseTime > before[n].metadata.responseTime)
            #expect(after.metadata.header("ETag") == "W/\"e\(n)\"")
        }
    }

    @Test func a304KeepsTheBodyAndReplacesOnlyTheHeadersItCarries() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/u.png", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT",
                              headers: [("Cache-Control", "max-age=0"), ("Content-Type", "image/png")],
                              notModified: [("Cache-Control", "max-age=600"), ("Expires", httpDate(600))])
        let stored = try #require(await h.load("/u.png").result?.path)
        let before = try #require(try h.entry("/u.png"))
        let second = try #require(await h.load("/u.png").result)
        #expect(second.source == .revalidated && second.path == stored && second.status == 304)
        #expect(second.format == .png && second.width == 64 && second.bytes == Int64(LoaderHarness.png.count))
        let after = try #require(try h.entry("/u.png"))
        #expect(after.metadata.bodyInode == before.metadata.bodyInode && after.metadata.bodyDigest == before.metadata.bodyDigest)
        #expect(after.metadata.headers.filter { $0.name.lowercased() == "cache-control" }.map(\.value) == ["max-age=600"])
        #expect(after.metadata.header("Expires") != nil, "new headers are added")
        #expect(after.metadata.header("Last-Modified") == "Sun, 06 Nov 1994 08:49:37 GMT", "absent from the 304: kept")
        #expect(after.metadata.header("Content-Type") == "image/png")
        #expect(after.metadata.responseTime > before.metadata.responseTime)
        #expect(await h.load("/u.png").source == .cache, "the 304's max-age now applies")
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: stored))) == LoaderHarness.png)
    }

    @Test func a200ToAConditionalRequestReplacesTheEntry() async throws {
        let h = try LoaderHarness()
        h.server.route("/r.img", [
            .ok(LoaderHarness.png, headers: [("ETag", "\"one\""), ("Cache-Control", "max-age=0")]),
            .ok(LoaderHarness.jpeg, contentType: "image/jpeg", headers: [("ETag", "\"two\""), ("Cache-Control", "max-age=600")]),
        ])
        _ = await h.load("/r.img")
        let second = try #require(await h.load("/r.img").result)
        #expect(second.source == .network && second.format == .jpeg && second.width == 120)
        #expect(h.server.requests("/r.img").last?.header("If-None-Match") == "\"one\"")
        let entry = try #require(try h.entry("/r.img"))
        #expect(entry.metadata.header("ETag") == "\"two\"")
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: entry.bodyPath))) == LoaderHarness.jpeg)
        #expect(await h.load("/r.img").source == .cache)
    }

    @Test func a304ForAnotherRepresentationIsNotTrustedAndTheBodyIsFetchedAgain() async throws {
        let h = try LoaderHarness()
        h.server.route("/m.png") { request in
            if request.header("If-None-Match") != nil { return .notModified(headers: [("ETag", "\"other\"")]) }
            return .ok(LoaderHarness.png, headers: [("ETag", "\"mine\""), ("Cache-Control", "max-age=0")])
        }
        _ = await h.load("/m.png")
        #expect(await h.load("/m.png").source == .network)
        #expect(h.server.requestCount("/m.png") == 3)
        #expect(h.server.conditionalRequests("/m.png") == 1)
    }

    @Test func varyReusesAnEntryOnlyForTheSameRequestHeaderValues() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/vary.png", headers: [("Vary", "Accept"), ("Cache-Control", "max-age=600")])
        let webp: (inout LoaderOptions) -> Void = { $0.fetch.headers.set(name: "Accept", value: "image/webp") }
        let png: (inout LoaderOptions) -> Void = { $0.fetch.headers.set(name: "accept", value: "image/png") }
        #expect(await h.load("/vary.png", webp).source == .network)
        #expect(try h.entry("/vary.png")?.metadata.varyRequest.first?.value == "image/webp")
        #expect(await h.load("/vary.png", webp).source == .cache)
        #expect(await h.load("/vary.png", png).source == .network, "-H changed a header Vary names")
        #expect(h.server.requests("/vary.png").last?.header("If-None-Match") == nil)
        #expect(await h.load("/vary.png", png).source == .cache)
        #expect(await h.load("/vary.png").source == .network, "curl's default Accept: */* differs too")
        #expect(h.server.requestCount("/vary.png") == 3)
    }

    @Test func varyOnAHeaderNotSentMatchesOnlyWhileItStaysUnsent() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/lang.png", headers: [("Vary", "accept-language, X-Unused"), ("Cache-Control", "max-age=600")])
        _ = await h.load("/lang.png")
        #expect(await h.load("/lang.png").source == .cache)
        #expect(await h.load("/lang.png") { $0.fetch.headers.set(name: "Accept-Language", value: "fr") }.source == .network)
    }

    @Test func varyStarNeverMatches() async throws {
        let h = try LoaderHarness()
        h.server.revalidating("/star.png", headers: [("Vary", "*"), ("Cache-Control", "max-age=600")])
        _ = await h.load("/star.png")
        #expect(await h.load("/star.png").source == .network)
        #expect(await h.load("/star.png") { $0.offline = true }.name == "empty")
        #expect(h.server.conditionalRequests("/star.png") == 0)
    }
}
