import Fetch
import Foundation
import Testing
import TestSupport

/// Every failure is a `FetchError` with a kind of SPEC §3, the URL without
/// its password, libcurl's code and text where libcurl failed, and a message
/// a person can read.
@Suite(.timeLimit(.minutes(3))) struct FetchErrorTests {
    /// A sink whose disk is full.
    final class FullDiskSink: BodySink, @unchecked Sendable {
        var writes = 0
        func write(_ bytes: UnsafeRawBufferPointer) throws {
            writes += 1
            throw FetchError.io(path: "/full/disk", operation: "write", errno: ENOSPC)
        }
        func reset() throws {}
    }

    @Test(arguments: [2_000, 500_000])
    func aSinkThatFailsMakesAnIOError(bodySize: Int) async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Array(repeating: 1, count: bodySize)))
        let sink = FullDiskSink()
        do {
            _ = try await FetchClient().fetch(FetchRequest(url: server.url("/a.png")), into: sink)
            Issue.record("a failing sink must fail the fetch")
        } catch let error as FetchError {
            #expect(error.kind == .io)
            #expect(error.message == "I/O error: write /full/disk: No space left on device")
            #expect(error.attempts == 1, "a local I/O error is not retried")
            #expect(sink.writes == 1)
        }
    }

    @Test func errorsCarryTheRedactedURLCurlsCodeAndText() async throws {
        let server = try ScriptedServer()
        var lie = ScriptedResponse.ok([1, 2, 3])
        lie.declaredLength = 10
        server.route("/short.png", lie)
        let url = "http://user:hunter2@127.0.0.1:\(server.port)/short.png"
        let harness = try FetchHarness()
        let error = try #require(try await harness.fetch(url).error)
        #expect(error.url == "http://user:***@127.0.0.1:\(server.port)/short.png")
        #expect(error.curlCode == 18)
        #expect(error.curlMessage == "transfer closed with 7 bytes remaining to read")
        #expect(error.description == "http://user:***@127.0.0.1:\(server.port)/short.png: network error: transfer closed with 7 bytes remaining to read")
        #expect(server.requests("/short.png").first?.header("Authorization") == "Basic " + Data("user:hunter2".utf8).base64EncodedString())
    }

    @Test func tlsFailuresExplainTheCertificateProblem() async throws {
        let nginx = try NginxServer(root: Paths.fixtures, tls: true)
        let harness = try FetchHarness { $0.retries = 2; $0.retryBaseDelay = 0.01 }
        let error = try #require(try await harness.fetch(nginx.url("/images/red-64x48.png")).error)
        #expect(error.kind == .tls)
        #expect(error.curlCode == 60)
        #expect(error.message.hasPrefix("TLS error: SSL certificate problem: self-signed certificate"), "\(error.message)")
        #expect(error.attempts == 1, "a certificate will not change on retry")
    }

    @Test func messagesNameTheProblemThenTheExplanation() {
        let url = "https://a:b@example.com/x.png"
        #expect(FetchError(.cancelled, url: url).message == "cancelled")
        #expect(FetchError(.cancelled, url: url).description == "https://a:***@example.com/x.png: cancelled")
        #expect(FetchError(.http, url: url, status: 429).message == "HTTP 429 Too Many Requests")
        #expect(FetchError(.http, url: url, status: 599).message == "HTTP 599 Server Error")
        // Every status RFC 9110 §15 defines has its own phrase; its class ("Redirection") was shown for 300, 413, 416 …
        #expect(FetchError(.http, url: url, status: 300).message == "HTTP 300 Multiple Choices")
        #expect(FetchError(.http, url: url, status: 413).message == "HTTP 413 Content Too Large")
        #expect(FetchError(.http, url: url, status: 451).message == "HTTP 451 Unavailable For Legal Reasons")
        let defined = [201, 202, 205, 300, 305, 402, 406, 407, 409, 411, 412, 413, 414, 415, 416, 417, 421, 422, 426, 505]
        let generic = ["Success", "Redirection", "Client Error", "Server Error"]
        #expect(defined.filter { generic.contains(HTTPStatus.reason($0)) } == [], "statuses shown by their class only")
        #expect(FetchError(.dns, url: url, curlCode: 6, curlMessage: "Could not resolve host: example.com").message
                == "could not resolve host: example.com", "said once, not twice")
        #expect(FetchError(.dns, url: url, curlCode: 6, curlMessage: "Name lookup failed").message
                == "could not resolve host: Name lookup failed")
        #expect(FetchError(.unsupportedScheme, url: "gopher://x/", detail: "'gopher'").message
                == "unsupported scheme: 'gopher' (only http and https are allowed)")
        #expect(FetchError(.network, url: url, detail: "out of memory building request headers").message
                == "network error: out of memory building request headers")
        #expect(FetchError(.tooLarge, url: url, curlCode: 63, curlMessage: "Maximum file size exceeded").message
                == "response too large: Maximum file size exceeded")
    }

    @Test func headerBlocksParseLikeHTTP() {
        let block = Array("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nX-Empty:\r\nCache-Control: max-age=60,\r\n  immutable\r\nETag:  \"v1\" \r\n\r\n".utf8)
        let headers = HTTPHeaders(parsing: block)
        #expect(headers.fields.map(\.name) == ["Content-Type", "X-Empty", "Cache-Control", "ETag"])
        #expect(headers["content-type"] == "image/png")
        #expect(headers["X-Empty"] == "")
        #expect(headers["Cache-Control"] == "max-age=60, immutable")
        #expect(headers["etag"] == "\"v1\"")
        #expect(HTTPHeaders(parsing: Array("HTTP/2 304\n\n".utf8)).isEmpty)
    }
}
