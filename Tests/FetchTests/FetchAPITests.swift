import Fetch
import Foundation
import Support
import Testing
import TestSupport

/// `Fetch` as a library user meets it (no `@testable`): the README's
/// snippet, and what a user may write into `FetchConfiguration` without
/// reading the engine ("no limit" as `.infinity`, a negative number), each
/// of which once trapped (the process died) on the first transfer or retry.
@Suite(.timeLimit(.minutes(3))) struct FetchAPITests {
    static let png = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + Array(repeating: 7, count: 500)

    /// The README's lines: the body lands in the file; a failure leaves no file once removed.
    @Test func theReadmeSnippetSavesTheBodyAndCleansUpAfterAFailure() async throws {
        let server = try ScriptedServer()
        server.route("/cat.png", .ok(Self.png))
        let temp = try TempDirectory(prefix: "asyncfetch-api")
        let client = FetchClient()
        for (path, expected) in [("/cat.png", "200 \(Self.png.count)"), ("/missing.png", "http HTTP 404 Not Found")] {
            let file = temp.file(String(path.dropFirst()))
            var printed = ""
            let sink = try FileSink(path: file)
            do {
                let response = try await client.fetch(FetchRequest(url: server.url(path)), into: sink)
                try sink.close()
                printed = "\(response.status) \(response.bodyBytes)"
            } catch let error as FetchError {
                sink.remove()
                printed = "\(error.kind.rawValue) \(error.message)"
            }
            #expect(printed == expected)
            #expect(FileManager.default.contents(atPath: file).map { [UInt8]($0) } == (path == "/cat.png" ? Self.png : nil))
        }
    }

    @Test func anInfiniteLowSpeedTimeTurnsTheCheckOff() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let harness = try FetchHarness { $0.lowSpeedTime = .infinity }
        let outcome = try await harness.fetch(server.url("/a.png"))
        #expect(outcome.response?.status == 200, "\(String(describing: outcome.error))")
        #expect(outcome.body == Self.png)
    }

    /// A negative or NaN retry delay retries, and does not trap. That the retry comes at once
    /// (no wait at all) is checked on the delays themselves, with no clock:
    /// `FetchRetryTests.aNegativeOrNaNDelayIsNoWait`.
    @Test func aNegativeOrNaNRetryDelayRetriesAtOnce() async throws {
        for delay in [-1, Double.nan] {
            let server = try ScriptedServer()
            server.route("/flaky.png", [.status(503), .ok(Self.png)])
            let harness = try FetchHarness { $0.retries = 1; $0.retryBaseDelay = delay; $0.retryMaxDelay = delay }
            let outcome = try await harness.fetch(server.url("/flaky.png"))
            #expect(outcome.response?.attempts == 2, "delay \(delay): \(String(describing: outcome.error))")
            #expect(outcome.body == Self.png)
        }
    }

    /// `retryMaxDelay = .infinity` lets the server's `Retry-After` decide:
    /// one of 10^11 seconds is a wait (which cancelling ends), not a trap.
    @Test func anUncappedRetryAfterBeyondWhatASleepHoldsIsAWaitThatCancelEnds() async throws {
        let server = try ScriptedServer()
        server.route("/busy.png", [.status(503, headers: [("Retry-After", "100000000000")]), .ok(Self.png)])
        let harness = try FetchHarness { $0.retries = 1; $0.retryMaxDelay = .infinity }
        let fetch = Task { try await harness.fetch(server.url("/busy.png")) }
        let deadline = monotonicSeconds() + 5
        while server.requestCount("/busy.png") == 0 && monotonicSeconds() < deadline {
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        fetch.cancel()
        let outcome = try await fetch.value
        #expect(outcome.error?.kind == .cancelled, "\(String(describing: outcome.error))")
        #expect(server.requestCount("/busy.png") == 1)
    }

    /// libcurl reads a negative CURLOPT_MAXREDIRS as "unlimited"; SPEC §5
    /// allows at most 10. Below 0 now means 0: the first redirect is too many.
    @Test func aNegativeMaxRedirectsFollowsNoRedirect() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        server.route("/hop", .redirect(to: "/a.png"))
        let harness = try FetchHarness { $0.maxRedirects = -1 }
        let outcome = try await harness.fetch(server.url("/hop"))
        #expect(outcome.error?.kind == .redirects, "\(String(describing: outcome.response?.redirects)) redirects followed")
        #expect(server.requestCount("/a.png") == 0)
        var configuration = FetchConfiguration()
        configuration.maxRedirects = -1
        #expect(FetchClient(configuration: configuration).configuration.maxRedirects == 0)
    }

    /// An empty URL says so, and its description does not start with ": ".
    @Test func anEmptyURLIsAReadableError() throws {
        let error = try #require(throws: FetchError.self) { try FetchClient.validate("") }
        #expect(error.kind == .invalidURL)
        #expect(error.description == "invalid URL: the URL is empty")
        #expect(FetchError(.cancelled, url: "").description == "cancelled")
    }
}
