import Foundation
import Testing
import TestSupport

/// A server that sends a whole image under a `Content-Length` larger than
/// what it sends, then stalls with the connection open: an incomplete HTTP
/// message. It fails promptly (`Defaults.endedBodyStallTime`, 10 s), once,
/// with a message that says so, and nothing of it is stored; it used to wait
/// for the low-speed abort per attempt (3 × 30 s, as timeouts that then gave
/// the host up).
@Suite struct StalledBodyE2ETests {
    static func stalling(_ body: [UInt8], _ type: String) -> ScriptedResponse {
        var response = ScriptedResponse.ok(body, contentType: type)
        response.declaredLength = body.count + 1000
        response.stallAfterBody = 60
        return response
    }

    @Test func aWholeImageThatStallsShortOfItsLengthFailsPromptlyAndIsNotStored() async throws {
        let server = try ScriptedServer()
        defer { server.stop() }
        // One held in memory by the transfer (153 bytes), one streamed to the cache as it arrives (180 KB).
        let small = FixtureSite.png, large = ImageFixture.jpegWithLargeMetadata(segments: 3)
        server.route("/small.png", Self.stalling(small, "image/png"))
        server.route("/large.jpg", Self.stalling(large, "image/jpeg"))
        let urls = [server.url("/small.png"), server.url("/large.jpg")]
        let cli = try CLI()
        let start = Date()
        // --timeout 30: the old code's attempts ended at the timeout, each retried.
        let result = try await cli.runOffPool(["--json", "--timeout", "30"] + urls)
        let elapsed = Date().timeIntervalSince(start)
        #expect(result.status == 1, "\(result.stderr)")
        #expect(elapsed < 25, "took \(elapsed) s")
        for (url, body) in zip(urls, [small, large]) {
            let terminal = try #require(FetchE2ETests.terminal(result, url), "\(result.stdout)")
            let error = try #require(terminal["error"] as? [String: Any])
            #expect(error["kind"] as? String == "network")
            let message = error["message"] as? String ?? ""
            #expect(message.hasPrefix("network error: the server stopped sending after the image ended: "
                                      + "\(body.count) of \(body.count + 1000) bytes (Content-Length) arrived, then nothing for "),
                    "\(message)")
            #expect(terminal["attempts"] as? Int == 1, "a stall short of Content-Length is not retried")
        }
        #expect(server.requestCount("/small.png") == 1 && server.requestCount("/large.jpg") == 1)
        #expect(!result.stderr.contains("not tried again"), "the host was given up: \(result.stderr)")
        let path = try await cli.runOffPool(["cache", "path"] + urls)
        #expect(path.status == 1, "an incomplete response was stored: \(path.stdout)")
        #expect(FetchE2ETests.storedFiles(cli).isEmpty, "left in the cache: \(FetchE2ETests.storedFiles(cli))")
    }
}
