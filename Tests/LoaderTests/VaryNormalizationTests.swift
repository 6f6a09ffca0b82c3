import Fetch
import ImageFormats
import Loader
import HTTPCaching
import TestSupport
import Testing

/// RFC 9111 §4.1: a stored response with `Vary` answers a request whose
/// selecting headers (`-H`) match after normalisation; `Vary: *` never
/// matches (the entry is not even used for a conditional request); a
/// response with another `Vary` replaces the stored one.
@Suite struct VaryNormalizationTests {
    /// A loader sending these request header lines.
    static func sending(_ lines: [(String, String)]) -> (inout LoaderOptions) -> Void {
        { options in for (name, value) in lines { options.fetch.headers.add(name: name, value: value) } }
    }

    /// Stores `/v.png` (Vary: `vary`) with `first`, then loads it with `second`.
    static func secondSource(vary: String, first: [(String, String)], second: [(String, String)],
                             extra: [(String, String)] = []) async throws -> Source? {
        let h = try LoaderHarness()
        h.server.revalidating("/v.png", headers: [("Cache-Control", "max-age=600"), ("Vary", vary)] + extra)
        _ = await h.load("/v.png", sending(first))
        return await h.load("/v.png", sending(second)).source
    }

    @Test func whitespaceAndCombinedLinesAreNormalised() async throws {
        #expect(try await Self.secondSource(vary: "Foo", first: [("Foo", "1,2")], second: [("Foo", " 1, 2 ")]) == .cache)
        #expect(try await Self.secondSource(vary: "Foo", first: [("Foo", "1, 2")], second: [("Foo", "1"), ("Foo", "2")]) == .cache)
        // Order and case stay significant for a header asyncfetch knows nothing about.
        #expect(try await Self.secondSource(vary: "Foo", first: [("Foo", "1, 2")], second: [("Foo", "2, 1")]) == .network)
        #expect(try await Self.secondSource(vary: "Foo", first: [("Foo", "a")], second: [("Foo", "A")]) == .network)
    }

    @Test func acceptLanguageIgnoresOrderCaseAndSpaces() async throws {
        let lang = "Accept-Language"
        #expect(try await Self.secondSource(vary: lang, first: [(lang, "en, de")], second: [(lang, "de, en")]) == .cache)
        #expect(try await Self.secondSource(vary: lang, first: [(lang, "en, de")], second: [(lang, "eN, De")]) == .cache)
        #expect(try await Self.secondSource(vary: lang, first: [(lang, "en, de")], second: [(lang, " en ,   de")]) == .cache)
        #expect(try await Self.secondSource(vary: lang, first: [(lang, "en;q=0.5")], second: [(lang, "en; q=0.50")]) == .cache)
        #expect(try await Self.secondSource(vary: lang, first: [(lang, "en, de")], second: [(lang, "en, fr")]) == .network)
    }

    /// The stored response is `Content-Language: de`; a request that prefers
    /// `de` would get it from the server too.
    @Test func acceptLanguageSelectsTheStoredContentLanguage() async throws {
        let lang = "Accept-Language", de = [("Content-Language", "de")]
        #expect(try await Self.secondSource(vary: lang, first: [(lang, "en, de")], second: [(lang, "fr;q=0.5, de;q=1.0")], extra: de) == .cache)
        #expect(try await Self.secondSource(vary: lang, first: [(lang, "en, de")], second: [(lang, "de-AT")], extra: de) == .network)
        #expect(try await Self.secondSource(vary: lang, first: [(lang, "en, de")], second: [(lang, "fr, de;q=0.9")], extra: de) == .network)
    }

    @Test func missingHeadersMatchOnlyMissingHeaders() async throws {
        #expect(try await Self.secondSource(vary: "Foo, Bar, Baz", first: [("Foo", "1"), ("Baz", "789")],
                                            second: [("Foo", "1"), ("Baz", "789")]) == .cache)
        #expect(try await Self.secondSource(vary: "Foo", first: [], second: [("Foo", "1")]) == .network)
        #expect(try await Self.secondSource(vary: "Foo", first: [("Foo", "1")], second: []) == .network)
    }

    @Test(arguments: ["*", "*, *", ", *", "*, Foo", "Foo, *"])
    func varyStarNeverMatches(_ vary: String) async throws {
        #expect(try await Self.secondSource(vary: vary, first: [("Foo", "1")], second: [("Foo", "1")]) == .network)
    }

    /// One entry per URL (SPEC §4): the response to the latest request
    /// replaces the stored one, whatever `Vary` either had.
    @Test func aNewResponseWithAnotherVaryReplacesTheStoredOne() async throws {
        let h = try LoaderHarness()
        h.server.route("/r.png", [
            .ok(LoaderHarness.png, headers: [("Cache-Control", "max-age=600"), ("Vary", "Foo")]),
            .ok(LoaderHarness.jpeg, headers: [("Cache-Control", "max-age=600"), ("Vary", "Bar")]),
        ])
        _ = await h.load("/r.png", Self.sending([("Foo", "1")]))
        #expect(await h.load("/r.png", Self.sending([("Foo", "2"), ("Bar", "x")])).result?.format == .jpeg)
        let meta = try #require(try h.entry("/r.png")?.metadata)
        #expect(meta.header("Vary") == "Bar" && meta.varyRequest.map(\.name) == ["bar"])
        #expect(await h.load("/r.png", Self.sending([("Foo", "9"), ("Bar", "x")])).source == .cache)
        #expect(await h.load("/r.png", Self.sending([("Foo", "1")])).source == .network)
    }
}
