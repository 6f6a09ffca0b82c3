import Foundation
import Testing
import TestSupport

/// Issue 23, item 4: a 4xx or 5xx whose body is broken is still reported as
/// that status (kind `http`); the message adds that the body was malformed.
@Suite struct HTTPErrorBodyE2ETests {
    static func head(_ status: Int, _ fields: String) -> String {
        "HTTP/1.1 \(status) \(ScriptedResponse.standardReason(status))\r\nContent-Type: text/html\r\n\(fields)\r\n"
    }

    /// Broken bodies, as raw bytes after the status line and headers.
    static let bodies: [(name: String, fields: String, body: String, says: String)] = [
        ("broken chunked framing", "Transfer-Encoding: chunked\r\n", "zz\r\nnot a chunk size\r\n", "chunk"),
        ("closed before the last chunk", "Transfer-Encoding: chunked\r\n", "5\r\nhello\r\n", "transfer closed"),
        ("closed before the announced length", "Content-Length: 500\r\n", "<html>not found", "transfer closed"),
    ]

    @Test func anErrorStatusWithABrokenBodyIsReportedAsTheStatus() async throws {
        let server = try ScriptedServer()
        var checks: [(url: String, status: Int, says: String)] = []
        for status in [404, 410, 418, 429, 500, 502] {
            for (index, item) in Self.bodies.enumerated() {
                let path = "/\(status)-\(index).png"
                server.route(path, .rawText(Self.head(status, item.fields) + item.body))
                checks.append((server.url(path), status, item.says))
            }
        }
        let cli = try CLI()
        let result = try await cli.runOffPool(["--json", "--retries", "0"] + checks.map(\.url))
        #expect(result.status == 1)
        for check in checks {
            let error = try #require(FetchE2ETests.error(result, check.url), "\(check.url): \(result.stdout)")
            #expect(error["kind"] as? String == "http", "\(check.url): \(error)")
            let message = error["message"] as? String ?? ""
            let prefix = "HTTP \(check.status) \(ScriptedResponse.standardReason(check.status)) (the body was also malformed: "
            #expect(message.hasPrefix(prefix) && message.contains(check.says), "\(check.url): \(message)")
        }
    }

    /// A 2xx with the same broken bodies is still a network failure: there the body is the point.
    @Test func aSuccessStatusWithABrokenBodyStaysANetworkFailure() async throws {
        let server = try ScriptedServer()
        var urls: [String] = []
        for (index, item) in Self.bodies.enumerated() {
            let path = "/ok-\(index).png"
            server.route(path, .rawText(Self.head(200, item.fields) + item.body))
            urls.append(server.url(path))
        }
        let cli = try CLI()
        let result = try await cli.runOffPool(["--json", "--retries", "0", "--any"] + urls)
        for url in urls {
            let error = try #require(FetchE2ETests.error(result, url), "\(result.stdout)")
            #expect(error["kind"] as? String == "network", "\(url): \(error)")
        }
        #expect(FetchE2ETests.storedFiles(cli).isEmpty, "stored: \(FetchE2ETests.storedFiles(cli))")
    }
}
