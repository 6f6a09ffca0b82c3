import Foundation
import Testing
import TestSupport

/// Session 22's open design questions about the command line, each decided
/// from SPEC.md (and RFC 9110/9111) and checked with the built binary.
@Suite struct DesignQuestionsE2ETests {
    static let png = FixtureSite.png

    static func json(_ result: ProcessResult) throws -> [[String: Any]] {
        try #require(CLI.jsonLines(result.stdout), "stdout: \(result.stdout)")
    }

    /// SPEC §5: `--retries N` retries N times, 429 and 503 included: a URL
    /// whose host keeps pushing back makes N + 1 requests, not N + 2 (the
    /// wait for the paused host is the retry, not a free extra attempt).
    @Test(arguments: [(429, 0), (503, 1), (503, 2)])
    func retriesCountEveryRequestAfterThePushback(status: Int, retries: Int) async throws {
        let server = try ScriptedServer()
        server.route("/busy.png", .status(status))
        let cli = try CLI()
        let result = try await cli.run([server.url("/busy.png"), "--retries", String(retries), "--json"])
        #expect(result.status == 1)
        let failure = try #require(try Self.json(result).first { $0["phase"] as? String == "failure" })
        #expect(failure["attempts"] as? Int == retries + 1, "\(failure)")
        #expect(server.requestCount("/busy.png") == retries + 1)
    }
}
