import Fetch
import Testing
import TestSupport

/// Every transfer's URL is parsed by libcurl as its handle is set up
/// (`CurlEasy.prepare`, CURLOPT_CURLU), not at the transfer's start: the
/// request goes out as libcurl's own parse sent it, and a reused handle
/// carries nothing of the URL before.
@Suite(.timeLimit(.minutes(3))) struct FetchURLParseTests {
    @Test func eachTransferOfAReusedHandleGoesToItsOwnURLAsLibcurlParsesIt() async throws {
        let server = try ScriptedServer()
        for path in ["/a.png", "/b.png", "/c.png", "/d.png", "/e%20f.png"] { server.route(path, .ok(Array("png".utf8))) }
        server.route("/dir/hop", .redirect(to: "../b.png?from=hop"))
        let harness = try FetchHarness()   // one fetch after another: the handle is reused
        let base = "http://127.0.0.1:\(server.port)"

        let first = try #require(try await harness.fetch(base + "/a.png?x=1#part").response)
        #expect(first.status == 200 && first.redirects == 0 && first.effectiveURL == base + "/a.png?x=1#part")
        #expect(server.requests("/a.png").map(\.path) == ["/a.png?x=1"], "the target with its query, no fragment")
        // Dot segments removed, as libcurl's parse does; the percent-encoding kept.
        #expect(try await harness.fetch(base + "/x/../c.png").response?.status == 200)
        #expect(try await harness.fetch(base + "/e%20f.png").response?.status == 200)
        #expect(server.requests("/c.png").map(\.path) == ["/c.png"] && server.requestCount("/e%20f.png") == 1)

        // A relative redirect resolves against the parsed URL.
        let hop = try #require(try await harness.fetch(base + "/dir/hop").response)
        #expect(hop.redirects == 1 && hop.effectiveURL == base + "/b.png?from=hop")
        #expect(server.requests("/b.png").map(\.path) == ["/b.png?from=hop"])

        // The URL's credentials go to its own request only.
        let credentials = "http://user:pw@127.0.0.1:\(server.port)/d.png"
        #expect(try await harness.fetch(credentials).response?.status == 200)
        #expect(server.requests("/d.png").last?.header("Authorization") == "Basic dXNlcjpwdw==")
        #expect(try await harness.fetch(base + "/c.png").response?.status == 200)
        #expect(server.requests("/c.png").count == 2 && server.requests("/c.png").last?.header("Authorization") == nil)
        #expect(server.requests("/a.png").count == 1 && server.requests("/d.png").count == 1)
        #expect(server.allRequests.allSatisfy { $0.header("Host") == "127.0.0.1:\(server.port)" })
    }
}
