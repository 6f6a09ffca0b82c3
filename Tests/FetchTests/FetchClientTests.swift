import Fetch
import Foundation
import Testing
import TestSupport

/// The real libcurl against the in-process scripted server on 127.0.0.1.
@Suite struct FetchClientTests {
    @Test func bodyStreamsByteForByteIntoTheSink() async throws {
        let server = try ScriptedServer()
        let body = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        server.route("/big.png", .ok(body, headers: [("ETag", "\"v1\"")]))
        let temp = try TempDirectory()
        let sink = try FileSink(path: temp.file("out"))
        let response = try await FetchClient().fetch(FetchRequest(url: server.url("/big.png")), into: sink)
        try sink.close()
        #expect(response.status == 200)
        #expect(response.bodyBytes == Int64(body.count))
        #expect(response.headers["etag"] == "\"v1\"")
        #expect(response.attempts == 1)
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: temp.file("out")))) == body)
        #expect(server.requests("/big.png").first?.header("User-Agent") == Defaults.userAgent)
    }

    @Test func cancellingTheTaskAbortsASlowTransferPromptly() async throws {
        let server = try ScriptedServer()
        var slow = ScriptedResponse.ok(Array(repeating: 7, count: 100_000))
        slow.trickle = (chunk: 100, interval: 0.05)
        server.route("/slow.png", slow)
        let temp = try TempDirectory()
        let path = temp.file("partial")
        let client = FetchClient()
        let task = Task {
            let sink = try FileSink(path: path)
            do {
                _ = try await client.fetch(FetchRequest(url: server.url("/slow.png")), into: sink)
                sink.remove()
                return FetchError.Kind?.none
            } catch let error as FetchError {
                sink.remove()
                return error.kind
            }
        }
        #expect(server.waitForRequests("/slow.png", count: 1, timeout: 5))
        try await Task.sleep(nanoseconds: 200_000_000)   // the body is trickling now
        let cancelledAt = monotonicSeconds()
        task.cancel()
        let kind = try await task.value
        let elapsed = monotonicSeconds() - cancelledAt
        #expect(kind == .cancelled)
        #expect(elapsed < 0.1, "cancellation took \(elapsed * 1000) ms")
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aTaskCancelledBeforeItStartsNeverReachesTheServer() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok([1, 2, 3]))
        let temp = try TempDirectory()
        let client = FetchClient()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            let sink = try FileSink(path: temp.file("x"))
            defer { sink.remove() }
            do {
                _ = try await client.fetch(FetchRequest(url: server.url("/a.png")), into: sink)
                return FetchError.Kind?.none
            } catch let error as FetchError { return error.kind }
        }
        #expect(try await task.value == .cancelled)
        #expect(server.requestCount("/a.png") == 0)
    }

    @Test func unsupportedSchemesAndMalformedURLsFailBeforeAnyIO() async throws {
        let temp = try TempDirectory()
        let client = FetchClient()
        for (url, kind) in [("file:///etc/passwd", FetchError.Kind.unsupportedScheme), ("ftp://127.0.0.1/x", .unsupportedScheme),
                            ("not a url", .invalidURL), ("http://", .invalidURL), ("http://exa mple.com/", .invalidURL)] {
            let sink = try FileSink(path: temp.file("s\(kind)\(url.count)"))
            defer { sink.remove() }
            await #expect(throws: FetchError.self) {
                do { _ = try await client.fetch(FetchRequest(url: url), into: sink) } catch let error as FetchError {
                    #expect(error.kind == kind, "\(url)")
                    throw error
                }
            }
        }
    }

    @Test func httpErrorsCarryStatusAndHeaders() async throws {
        let server = try ScriptedServer()
        server.route("/gone.png", .status(410, headers: [("Cache-Control", "max-age=60")], body: "gone"))
        let temp = try TempDirectory()
        let sink = try FileSink(path: temp.file("x"))
        defer { sink.remove() }
        do {
            _ = try await FetchClient().fetch(FetchRequest(url: server.url("/gone.png")), into: sink)
            Issue.record("a 410 must throw")
        } catch let error as FetchError {
            #expect(error.kind == .http)
            #expect(error.status == 410)
            #expect(error.headers?["cache-control"] == "max-age=60")
            #expect(error.message == "HTTP 410 Gone")
            #expect(sink.bytesWritten == 0, "an error body must not reach the sink")
        }
    }

    @Test func passwordsNeverAppearInErrors() async throws {
        let temp = try TempDirectory()
        let sink = try FileSink(path: temp.file("x"))
        defer { sink.remove() }
        var config = FetchConfiguration()
        config.retries = 0
        do {
            _ = try await FetchClient(configuration: config).fetch(FetchRequest(url: "http://user:hunter2@127.0.0.1:1/x.png"), into: sink)
        } catch let error as FetchError {
            #expect(error.kind == .connect)
            #expect(!error.description.contains("hunter2"))
            #expect(error.url == "http://user:***@127.0.0.1:1/x.png")
        }
    }
}
