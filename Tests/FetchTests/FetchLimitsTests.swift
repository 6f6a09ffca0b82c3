import Fetch
import Foundation
import Glibc
import Testing
import TestSupport

/// Timeouts, the low-speed abort, truncated bodies, --max-size and redirects,
/// each against a server that misbehaves in exactly that way.
@Suite(.timeLimit(.minutes(3))) struct FetchLimitsTests {
    static let png = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + Array(repeating: 0x42, count: 2000)

    @Test func aFirstByteSlowerThanTheTimeoutIsATimeout() async throws {
        let server = try ScriptedServer()
        server.route("/slow.png", ScriptedResponse.ok(Self.png).delayed(5))
        let harness = try FetchHarness { $0.timeout = 0.4; $0.retries = 0 }
        let outcome = try await harness.fetch(server.url("/slow.png"))
        let error = try #require(outcome.error)
        #expect(error.kind == .timeout)
        #expect(error.curlCode == 28)
        #expect(error.message.hasPrefix("timed out: Operation timed out after"), "\(error.message)")
        #expect(outcome.seconds >= 0.35 && outcome.seconds < 4.5, "\(outcome.seconds) s")
        #expect(error.attempts == 1)
    }

    @Test func aBodyTrickledBelowTheLowSpeedLimitIsATimeout() async throws {
        let server = try ScriptedServer()
        // 100 bytes every 0.2 s: 500 B/s, under a 2000 B/s floor; would take 20 s in full.
        server.route("/trickle.png", ScriptedResponse.ok(Self.png + Array(repeating: 1, count: 8000)).trickled(chunk: 100, interval: 0.2))
        let harness = try FetchHarness { $0.lowSpeedLimit = 2000; $0.lowSpeedTime = 1; $0.retries = 0 }
        let outcome = try await harness.fetch(server.url("/trickle.png"))
        let error = try #require(outcome.error)
        #expect(error.kind == .timeout)
        #expect(error.curlCode == 28)
        #expect(error.message.contains("too slow"), "\(error.message)")
        #expect(outcome.seconds >= 0.9 && outcome.seconds < 8, "\(outcome.seconds) s: the whole body takes 20 s")
    }

    @Test func theConnectTimeoutAppliesWhenTheServerNeverAccepts() async throws {
        let listener = try FullBacklogListener()
        let harness = try FetchHarness { $0.connectTimeout = 0.3; $0.retries = 0 }
        let outcome = try await harness.fetch("http://127.0.0.1:\(listener.port)/a.png")
        let error = try #require(outcome.error)
        #expect(error.kind == .timeout)
        // libcurl 7.88 words it by which of its checks sees the deadline first (a
        // race): its connect step's "Failed to connect to HOST port N after T ms",
        // or its multi handle's "Connection timeout after T ms". Both say what happened.
        let connectStep = "timed out: Failed to connect to 127.0.0.1 port \(listener.port) after "
        let multiHandle = "timed out: Connection timeout after "
        #expect(error.message.hasPrefix(connectStep) || error.message.hasPrefix(multiHandle), "\(error.message)")
        #expect(outcome.seconds >= 0.28 && outcome.seconds < 5, "\(outcome.seconds) s")
    }

    @Test func aContentLengthLargerThanTheBodyThenCloseIsANetworkFailure() async throws {
        let server = try ScriptedServer()
        var lie = ScriptedResponse.ok(Self.png)
        lie.declaredLength = Self.png.count + 5000
        server.route("/short.png", lie)
        let harness = try FetchHarness()
        let outcome = try await harness.fetch(server.url("/short.png"))
        let error = try #require(outcome.error)
        #expect(error.kind == .network)
        #expect(error.curlCode == 18)
        #expect(error.message == "network error: transfer closed with 5000 bytes remaining to read")
        #expect(error.attempts == 1, "a truncated body is not retried")
        #expect(outcome.response == nil)
    }

    /// A body of 1 GiB with its Content-Length, trickled: the whole would take 40 s.
    static func gibibyte(status: Int, contentType: String) -> ScriptedResponse {
        var response = ScriptedResponse(status: status, headers: [("Content-Type", contentType)])
        response.generatedBodyLength = 1 << 30
        response.trickle = (chunk: 256 * 1024, interval: 0.01)
        return response
    }

    @Test func aKnownTooLargeContentLengthIsRefusedBeforeTheBody() async throws {
        let server = try ScriptedServer()
        server.route("/huge.png", Self.gibibyte(status: 200, contentType: "image/png"))
        let harness = try FetchHarness { $0.maxSize = 1 << 20 }
        let outcome = try await harness.fetch(server.url("/huge.png"))
        let error = try #require(outcome.error)
        #expect(error.kind == .tooLarge)
        #expect(error.curlCode == 63)
        #expect(error.message == "response too large: Content-Length 1073741824 exceeds the 1048576-byte limit")
        #expect(outcome.bytesWritten == 0, "no byte of the body may reach the sink")
        #expect(outcome.seconds < 5, "\(outcome.seconds) s: the whole body takes 40 s")
        // The client hung up, so the server stopped well before the end of its gigabyte.
        #expect(await eventually(within: 2) { server.requestsInFlight == 0 })
        #expect(server.requestCount("/huge.png") == 1, "too-large is not retried")
    }

    /// `--max-size` bounds the body as stored: an error status is that
    /// status however long its page (its body is dropped, and not read past
    /// the limit), and a coded body counts by its decoded bytes, not by a
    /// Content-Length of the encoded ones (both were refused as too large).
    @Test func theLimitIsOnTheStoredBodyNotAnyContentLength() async throws {
        let server = try ScriptedServer()
        server.route("/missing.png", Self.gibibyte(status: 404, contentType: "text/html"))
        let raw = (0..<20_000).map { _ in UInt8.random(in: 0...255) }   // gzip cannot shrink these
        let encoded = try runProcess("/usr/bin/gzip", ["-c", "-n"], stdin: raw).stdoutBytes
        #expect(encoded.count > raw.count)
        server.route("/coded.png", .ok(encoded, headers: [("Content-Encoding", "gzip")]))
        let harness = try FetchHarness { $0.maxSize = 20_000; $0.retries = 0 }

        let missing = try await harness.fetch(server.url("/missing.png"))
        let error = try #require(missing.error)
        #expect(error.kind == .http && error.status == 404, "\(error.message)")
        #expect(error.message == "HTTP 404 Not Found")
        #expect(missing.seconds < 5, "\(missing.seconds) s: the whole page takes 40 s")
        #expect(await eventually(within: 2) { server.requestsInFlight == 0 })

        let coded = try await harness.fetch(server.url("/coded.png"))
        #expect(coded.error == nil, "\(String(describing: coded.error))")
        #expect(coded.body == raw)
    }

    @Test func aBodyWithoutContentLengthIsAbortedAtTheLimit() async throws {
        let server = try ScriptedServer()
        var endless = ScriptedResponse(status: 200, headers: [("Content-Type", "image/png")])
        endless.generatedBodyLength = 1 << 30
        endless.omitContentLength = true
        endless.trickle = (chunk: 256 * 1024, interval: 0.005)
        server.route("/endless.png", endless)
        let harness = try FetchHarness { $0.maxSize = 1 << 20 }
        let outcome = try await harness.fetch(server.url("/endless.png"))
        let error = try #require(outcome.error)
        #expect(error.kind == .tooLarge)
        #expect(error.message == "response too large: the body went past the 1048576-byte limit")
        #expect(outcome.bytesWritten <= 1 << 20)
        #expect(outcome.seconds < 5, "\(outcome.seconds) s: the whole body takes 20 s")
        #expect(await eventually(within: 2) { server.requestsInFlight == 0 })
    }

    @Test func aBodyOfExactlyMaxSizeIsAccepted() async throws {
        let server = try ScriptedServer()
        var exact = ScriptedResponse(status: 200, headers: [("Content-Type", "image/png")])
        exact.generatedBodyLength = 200_000
        exact.omitContentLength = true
        server.route("/exact.png", exact)
        let harness = try FetchHarness { $0.maxSize = 200_000 }
        let outcome = try await harness.fetch(server.url("/exact.png"))
        #expect(outcome.error == nil, "\(String(describing: outcome.error))")
        #expect(outcome.body == ScriptedResponse.generatedBytes(count: 200_000))
    }

    /// `maxSize` 0 is no limit, as libcurl's CURLOPT_MAXFILESIZE_LARGE 0 and
    /// curl's `--max-filesize 0` (and as `timeout` 0): a body announced by its
    /// Content-Length and one without it are both taken whole. Before, 0
    /// refused every body ("Content-Length 2008 exceeds the 0-byte limit").
    @Test func aMaxSizeOfZeroIsNoLimit() async throws {
        let server = try ScriptedServer()
        server.route("/known.png", ScriptedResponse.ok(Self.png))
        var unknown = ScriptedResponse(status: 200, headers: [("Content-Type", "image/png")])
        unknown.generatedBodyLength = 3 << 20
        unknown.omitContentLength = true
        server.route("/unknown.png", unknown)
        let harness = try FetchHarness { $0.maxSize = 0; $0.retries = 0 }
        let known = try await harness.fetch(server.url("/known.png"))
        #expect(known.error == nil, "\(String(describing: known.error))")
        #expect(known.body == Self.png)
        let streamed = try await harness.fetch(server.url("/unknown.png"))
        #expect(streamed.error == nil, "\(String(describing: streamed.error))")
        #expect(streamed.bytesWritten == 3 << 20)
    }

    @Test func aRedirectLoopStopsAfterTenRedirects() async throws {
        let server = try ScriptedServer()
        server.route("/loop.png", .redirect(to: "/loop.png"))
        let harness = try FetchHarness()
        let outcome = try await harness.fetch(server.url("/loop.png"))
        let error = try #require(outcome.error)
        #expect(error.kind == .redirects)
        #expect(error.curlCode == 47)
        #expect(error.message == "too many redirects: Maximum (10) redirects followed")
        #expect(server.requestCount("/loop.png") == 11, "the first request and ten redirects")
    }

    @Test func tenRedirectsAreFollowed() async throws {
        let server = try ScriptedServer()
        for hop in 0..<10 { server.route("/r\(hop)", .redirect(to: "/r\(hop + 1)", status: hop % 2 == 0 ? 302 : 301)) }
        server.route("/r10", .ok(Self.png))
        let harness = try FetchHarness()
        let outcome = try await harness.fetch(server.url("/r0"))
        let response = try #require(outcome.response)
        #expect(response.redirects == 10)
        #expect(response.effectiveURL == server.url("/r10"))
        #expect(response.url == server.url("/r0"))
        #expect(outcome.body == Self.png)
    }

    @Test func aRedirectToAFileURLIsAnUnsupportedScheme() async throws {
        let server = try ScriptedServer()
        server.route("/sneaky.png", .redirect(to: "file:///etc/passwd"))
        server.route("/ftp.png", .redirect(to: "ftp://127.0.0.1:\(server.port)/x.png"))
        let harness = try FetchHarness()
        let outcome = try await harness.fetch(server.url("/sneaky.png"))
        let error = try #require(outcome.error)
        #expect(error.kind == .unsupportedScheme)
        #expect(error.curlCode == 1)
        #expect(error.message.hasPrefix("unsupported scheme: redirect to file:///etc/passwd (only http and https are allowed)"),
                "\(error.message)")
        #expect(outcome.bytesWritten == 0)
        let ftp = try #require(try await harness.fetch(server.url("/ftp.png")).error)
        #expect(ftp.kind == .unsupportedScheme)
        #expect(server.totalRequests == 2, "nothing but the two redirecting requests reached any server")
    }
}
