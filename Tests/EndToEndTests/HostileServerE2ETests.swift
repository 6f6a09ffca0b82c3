import Foundation
import Testing
import TestSupport

/// Servers that break HTTP on purpose (issue 14): the built binary never
/// traps, names what was wrong, and stores nothing it should not.
@Suite struct HostileServerE2ETests {
    static let png = FetchE2ETests.png

    static func terminal(_ result: ProcessResult, _ url: String) -> [String: Any]? {
        FetchE2ETests.terminal(result, url)
    }

    static func error(_ result: ProcessResult, _ url: String) -> [String: Any]? {
        FetchE2ETests.error(result, url)
    }

    static func summary(_ result: ProcessResult) -> [String: Any]? {
        CLI.jsonLines(result.stdout)?.last?["summary"] as? [String: Any]
    }

    /// Item 1: SVG sizes no Int can hold. Every URL of the batch still gets
    /// its report, the run ends with its summary, and no temporary is left.
    @Test func svgNumbersNoIntCanHoldNeverTrap() async throws {
        let server = try ScriptedServer()
        let documents = [
            #"<svg width="9.3e18"/>"#, #"<svg height="1e30"/>"#, #"<svg viewBox="0 0 1e30 1"/>"#,
            #"<svg width="9223372036854775807"/>"#, #"<svg width="-1e30" height="nan" viewBox="0 0 -9e99 inf"/>"#,
        ]
        var urls: [String] = []
        for (n, document) in documents.enumerated() {
            server.route("/\(n).svg", .rawText("HTTP/1.1 200 OK\r\nContent-Type: image/svg+xml\r\n"
                                              + "Content-Length: \(document.utf8.count)\r\n\r\n\(document)"))
            urls.append(server.url("/\(n).svg"))
        }
        server.route("/ok.png", .ok(Self.png))
        urls.append(server.url("/ok.png"))
        let cli = try CLI()
        let result = try await cli.runOffPool(["--json"] + urls)
        #expect(result.signal == nil && result.status == 0, "status \(result.status): \(result.stderr)")
        for url in urls {
            #expect(Self.terminal(result, url)?["phase"] as? String == "success", "\(url): \(result.stdout)")
        }
        let big = try #require(Self.terminal(result, urls[0]))
        #expect(big["format"] as? String == "svg" && big["width"] == nil, "a size no image has is unknown: \(big)")
        #expect(Self.summary(result)?["success"] as? Int == urls.count)
        // Only entries (a 32-hex key, maybe a metadata sidecar) and no temporary file remain
        // (beside the directory's note of where it keeps metadata).
        let files = FetchE2ETests.storedFiles(cli).filter { !$0.hasSuffix(".asyncfetch-store") }
        #expect(files.count >= urls.count && files.allSatisfy { path in
            let name = path.split(separator: "/").last.map(String.init) ?? path
            let key = name.hasSuffix(".meta") ? String(name.dropLast(5)) : name
            return !path.contains("tmp") && key.count == 32 && key.allSatisfy(\.isHexDigit)
        }, "\(files)")
    }

    /// Item 2: malformed status lines are `network`, "malformed response from the
    /// server", never "unsupported-scheme" with a "redirect to" the requested URL.
    @Test func malformedResponsesAreNetworkFailuresThatSayWhatWasWrong() async throws {
        let server = try ScriptedServer()
        let cases: [(String, [UInt8], String)] = [
            ("/status", Array("HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\nhi".utf8), "response code"),
            ("/version", Array("HTTP/1.2 200 OK\r\nContent-Length: 2\r\n\r\nhi".utf8), "HTTP version"),
            ("/icy", Array("ICY 200 OK\r\nContent-Length: 2\r\n\r\nhi".utf8), "HTTP/0.9"),
            ("/http09", Array("<html>an HTTP/0.9 body</html>".utf8), "HTTP/0.9"),
            ("/garbage", [0x00, 0x01, 0xFF, 0xFE, 0x89, 0x50, 0x0D, 0x0A, 0x0D, 0x0A, 0x7F], "HTTP/0.9"),
            ("/continue", Array("HTTP/1.1 100 Continue\r\n\r\nsurprise body".utf8), "HTTP/0.9"),
            ("/reason", Array("HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nhi".utf8), "response code"),
        ]
        for (path, bytes, _) in cases { server.route(path, .rawBytes(bytes)) }
        // A redirect chain whose second response is malformed: still no "redirect to".
        server.route("/hop", .redirect(to: "/status"))
        let cli = try CLI()
        let urls = cases.map { server.url($0.0) } + [server.url("/hop")]
        let result = try await cli.runOffPool(["--json", "--any", "--retries", "0"] + urls)
        #expect(result.signal == nil && result.status == 1, "\(result.stderr)")
        for (url, what) in zip(urls, cases.map(\.2) + ["response code"]) {
            let error = try #require(Self.error(result, url), "\(url): \(result.stdout)")
            let message = error["message"] as? String ?? ""
            #expect(error["kind"] as? String == "network", "\(url): \(error)")
            #expect(message.hasPrefix("malformed response from the server: "), "\(url): \(message)")
            #expect(message.contains(what), "\(url): \(message) should say \(what)")
            #expect(!message.contains("redirect"), "\(url): \(message)")
        }
        #expect(FetchE2ETests.storedFiles(cli).isEmpty, "stored: \(FetchE2ETests.storedFiles(cli))")
    }

    /// Item 2: a refused redirect names its target, not the URL asked for.
    @Test func refusedRedirectsNameTheirTarget() async throws {
        let server = try ScriptedServer()
        let targets = ["data:image/png;base64,iVBORw0KGgo=", "javascript:alert(1)", "ftp://127.0.0.1/x.png"]
        for (n, target) in targets.enumerated() { server.route("/r\(n)", .redirect(to: target)) }
        let cli = try CLI()
        let urls = targets.indices.map { server.url("/r\($0)") }
        let result = try await cli.runOffPool(["--json"] + urls)
        for (url, target) in zip(urls, targets) {
            let error = try #require(Self.error(result, url), "\(result.stdout)")
            #expect(error["kind"] as? String == "unsupported-scheme")
            #expect(error["message"] as? String == "unsupported scheme: redirect to \(target) (only http and https are allowed)")
            // effectiveUrl names where it failed, the refused target, for every scheme: for `data:` and
            // `javascript:` (no `//`) it named the redirecting URL, while `ftp:` named its target.
            let line = try #require(CLI.jsonLines(result.stdout)?.first { $0["url"] as? String == url && $0["phase"] as? String == "failure" })
            #expect(line["effectiveUrl"] as? String == target, "\(line)")
        }
    }

    /// Item 3: a response cut inside its headers, and every invalid
    /// Content-Length, fail as `network`; with `--any` nothing is stored,
    /// so a later run finds nothing either.
    @Test func cutHeadersAndInvalidContentLengthFailAndStoreNothing() async throws {
        let server = try ScriptedServer()
        var cases: [(String, String, String)] = [
            ("/cut", "HTTP/1.1 200 OK\r\n", "the connection closed inside the response headers"),
            ("/cut2", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Le", "the connection closed inside the response headers"),
        ]
        for value in ["5abc", "1e3", "5.5", "0x10", "5, 74", "+5", "5 5"] {
            cases.append(("/cl\(cases.count)", "HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\nhelloworld",
                          "invalid Content-Length \"\(value)\""))
        }
        // libcurl refuses these two itself, before the header callback sees them.
        for value in ["-5", ""] {
            cases.append(("/cl\(cases.count)", "HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\nhelloworld",
                          "invalid Content-Length: value"))
        }
        cases.append(("/two", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhelloworld",
                      "two different Content-Length values"))
        for (path, text, _) in cases { server.route(path, .rawText(text)) }
        // Allowed: a list of one repeated value (RFC 9110 §8.6).
        server.route("/same", .rawText("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello"))
        let cli = try CLI()
        let urls = cases.map { server.url($0.0) }
        let result = try await cli.runOffPool(["--json", "--any", "--retries", "0"] + urls + [server.url("/same")])
        for (url, what) in zip(urls, cases.map(\.2)) {
            let error = try #require(Self.error(result, url), "\(url): \(result.stdout)")
            #expect(error["kind"] as? String == "network", "\(url): \(error)")
            #expect(error["message"] as? String == "malformed response from the server: " + what, "\(url): \(error)")
        }
        #expect(Self.terminal(result, server.url("/same"))?["bytes"] as? Int == 5)
        let offline = try await cli.runOffPool(["--json", "--offline"] + urls)
        for url in urls {
            #expect(Self.terminal(offline, url)?["phase"] as? String == "empty", "\(url) was stored")
        }
    }

    /// Item 4: a server that closes each idle keep-alive connection as the
    /// client reuses it. libcurl retries such a request on a fresh connection
    /// only five times per transfer; a 6-hop chain (and a 10-hop one) still
    /// succeeds, and a loop is still `redirects` after 10 hops.
    @Test func redirectChainsSurviveServersThatCloseIdleConnections() async throws {
        let server = try ScriptedServer()
        func hop(_ to: String) -> ScriptedResponse {
            var response = ScriptedResponse.redirect(to: to)
            response.dropNextRequest = true
            return response
        }
        for n in 0..<10 { server.route("/h\(n)", hop("/h\(n + 1)")) }
        server.route("/h10", .ok(Self.png))
        for n in 0..<6 { server.route("/s\(n)", hop("/s\(n + 1)")) }
        server.route("/s6", .ok(Self.png))
        server.route("/loop", hop("/loop"))
        let cli = try CLI()
        let six = server.url("/s0"), ten = server.url("/h0"), loop = server.url("/loop")
        let result = try await cli.runOffPool(["--json", "--retries", "0", six, ten, loop])
        for (url, final) in [(six, "/s6"), (ten, "/h10")] {
            let success = try #require(Self.terminal(result, url), "\(result.stdout)")
            #expect(success["phase"] as? String == "success", "\(url): \(success)")
            #expect(success["bytes"] as? Int == Self.png.count)
            #expect(server.requestCount(final) == 1)
        }
        let error = try #require(Self.error(result, loop), "\(result.stdout)")
        #expect(error["kind"] as? String == "redirects", "\(error)")
        #expect(error["message"] as? String == "too many redirects: Maximum (10) redirects followed")
        // Dropped requests are not hops: 11 answered requests at most, as without the drops.
        #expect(server.requests("/loop").count <= 2 * 11)
        #expect(server.connectionsAccepted > 10, "the server never made the client reconnect: the test tests nothing")
    }

    /// Issue 21: a host that accepts connections and closes them before any
    /// byte of an answer is given up on like one that refuses them. `-v`
    /// says so once, its other URLs fail at once with the reason, the
    /// summaries count it, and another host's URLs are not touched.
    @Test func aHostThatClosesConnectionsBeforeAnsweringIsGivenUpOnAndSaysSo() async throws {
        let closer = try ScriptedServer(), live = try ScriptedServer()
        closer.route("/img", .rawBytes([]))
        live.route("/a.png", .ok(Self.png))
        let urls = (0..<10).map { closer.url("/img?\($0)") } + [live.url("/a.png")]
        let reason = "host 127.0.0.1:\(closer.port) closed 3 connections in a row before answering; not tried again in this run"
        let cli = try CLI()
        let result = try await cli.runOffPool(["--json", "-v", "--no-progress"] + urls)
        #expect(result.signal == nil && result.status == 1, "\(result.stderr)")
        let lines = try #require(CLI.jsonLines(result.stdout))
        for url in urls { #expect(lines.filter { $0["url"] as? String == url && $0["phase"] as? String != "loading" }.count == 1, "\(url)") }
        let errors = urls.dropLast().compactMap { Self.error(result, $0) }
        #expect(errors.count == 10)
        let givenUp = errors.filter { $0["kind"] as? String == "connect" && $0["message"] as? String == "could not connect: " + reason }
        #expect(givenUp.count >= 4, "\(errors.map { $0["message"] ?? "" })")
        #expect(errors.allSatisfy { ($0["message"] as? String)?.hasPrefix("could not connect: host") == true
                || $0["message"] as? String == "network error: Empty reply from server" }, "\(errors.map { $0["message"] ?? "" })")
        #expect(Self.terminal(result, live.url("/a.png"))?["phase"] as? String == "success")
        #expect(result.stderr.components(separatedBy: "\n").filter { $0 == "asyncfetch: " + reason }.count == 1, "\(result.stderr)")
        #expect(Self.summary(result)?["hostsGivenUp"] as? Int == 1, "\(result.stdout)")
        let plain = try await CLI().runOffPool(urls)
        #expect(plain.stderr.contains("hosts: 2, 0 paused, 1 given up"), "\(plain.stderr)")
        #expect(closer.totalRequests <= 2 * 2 * 3, "\(closer.totalRequests) requests over two runs")
    }
}
