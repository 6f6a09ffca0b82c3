import Foundation
import Testing
import TestSupport

/// The `attempts` a result reports (docs/output.md: the number of requests
/// made, "0 when no request was needed"), where no request or a failed one
/// decides it.
@Suite struct AttemptCountE2ETests {
    /// docs/output.md: `attempts` is the number of requests made, "0 when no
    /// request was needed". A URL refused before any I/O made none.
    @Test func urlsRefusedBeforeAnyRequestCountNoAttempts() async throws {
        let cli = try CLI()
        let urls = ["not a url", "ftp://127.0.0.1/x.png", "http://", "http://exa mple.com/", "1http://x/", "http://[::1"]
        let result = try await cli.run(["--json"] + urls)
        #expect(result.status == 1)
        let failures = try HTTPCachingE2ETests.json(result).filter { $0["phase"] as? String == "failure" }
        #expect(failures.count == urls.count)
        for failure in failures {
            #expect(failure["attempts"] as? Int == 0, "\(failure)")
        }
        let verbose = try await cli.run(["-v"] + urls)
        #expect(!verbose.stdout.contains("attempts"), "\(verbose.stdout)")
    }

    /// A stale copy served after the network failed still made the request
    /// that failed: `attempts` counts it (and the retries).
    @Test func staleIfErrorCountsTheFailedAttempts() async throws {
        let server = try ScriptedServer()
        server.route("/flaky.png", [.ok(FixtureSite.png, headers: [("Cache-Control", "max-age=0")]), .status(503), .status(503)])
        let cli = try CLI()
        let url = server.url("/flaky.png")
        #expect(try await cli.run([url]).status == 0)
        let stale = try await cli.run([url, "--stale-if-error", "--retries", "1", "--json"])
        #expect(stale.status == 0, "\(stale.stderr)")
        let success = try #require(try HTTPCachingE2ETests.json(stale).first { $0["phase"] as? String == "success" })
        #expect(success["source"] as? String == "stale")
        // The first 503 pauses the host, and the one retry waits it out; the
        // second 503 fails, and the stale copy answers (SPEC §5: N retries).
        #expect(success["attempts"] as? Int == 2, "\(success)")
        #expect(server.requestCount("/flaky.png") == 3)
    }
}
