@testable import Fetch
import Foundation
import Support
import Testing
import TestSupport

/// `FetchClient.start`: a fetch without a Swift task. A first answer
/// completes on the transfer thread (no task runs the completion); a retry
/// goes on on a task with the same rules as `fetch`; a handle cancels it
/// before or while it runs, and the completion comes exactly once.
@Suite struct FetchStartTests {
    static let png = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + Array(repeating: 7, count: 500)

    /// What one completion saw.
    struct Completed: Sendable {
        let result: Result<FetchResponse, FetchError>
        /// The completion ran inside a Swift task.
        let onTask: Bool
    }

    /// Starts `url` and waits for its one completion (and fails on a second).
    static func start(_ client: FetchClient, _ url: String, into sink: BodySink, handle: FetchHandle = FetchHandle(),
                      afterStart: @Sendable () -> Void = {}) async -> (Completed, calls: Int) {
        let calls = Locked(0)
        let completed: Completed = await withCheckedContinuation { continuation in
            client.start(FetchRequest(url: url), into: sink, handle: handle) { result in
                let onTask = withUnsafeCurrentTask { $0 != nil }
                let first = calls.withLock { count -> Bool in
                    count += 1
                    return count == 1
                }
                if first { continuation.resume(returning: Completed(result: result, onTask: onTask)) }
            }
            afterStart()
        }
        try? await Task.sleep(nanoseconds: 100_000_000)   // a second completion would come by now
        return (completed, calls.withLock { $0 })
    }

    @Test func aFirstAnswerCompletesOnTheTransferThreadWithTheBodyInTheSink() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("a"))
        defer { sink.remove() }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/a.png"), into: sink)
        let response = try completed.result.get()
        #expect(response.status == 200)
        #expect(response.attempts == 1)
        #expect(!completed.onTask, "a first answer completes on the transfer loop's thread, not on a task")
        #expect(calls == 1)
        try sink.close()
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: sink.path))) == Self.png)
    }

    @Test func aRetryGoesOnOnATaskAndCountsItsAttempts() async throws {
        let server = try ScriptedServer()
        server.route("/flaky.png", [.status(503), .ok(Self.png)])
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("flaky"))
        defer { sink.remove() }
        var configuration = FetchConfiguration()
        configuration.retries = 2
        configuration.retryBaseDelay = 0.01
        let (completed, calls) = await Self.start(FetchClient(configuration: configuration), server.url("/flaky.png"), into: sink)
        let response = try completed.result.get()
        #expect(response.attempts == 2)
        #expect(completed.onTask, "after a failed attempt the fetch goes on on a task")
        #expect(calls == 1)
        #expect(server.requestCount("/flaky.png") == 2)
        try sink.close()
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: sink.path))) == Self.png)
    }

    @Test func aFinalErrorStatusFailsWithItsStatus() async throws {
        let server = try ScriptedServer()
        server.route("/gone.png", .status(404))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("gone"))
        defer { sink.remove() }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/gone.png"), into: sink)
        guard case .failure(let error) = completed.result else { Issue.record("a 404 succeeded"); return }
        #expect(error.kind == .http)
        #expect(error.status == 404)
        #expect(error.attempts == 1)
        #expect(calls == 1)
    }

    @Test func aHandleCancelledBeforeTheStartFailsCancelledWithoutARequest() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("early"))
        defer { sink.remove() }
        let handle = FetchHandle()
        handle.cancel()
        let (completed, calls) = await Self.start(FetchClient(), server.url("/a.png"), into: sink, handle: handle)
        guard case .failure(let error) = completed.result else { Issue.record("a cancelled fetch succeeded"); return }
        #expect(error.kind == .cancelled)
        #expect(calls == 1)
        #expect(server.requestCount("/a.png") == 0)
    }

    @Test func cancellingTheHandleStopsATransferInFlight() async throws {
        let server = try ScriptedServer()
        var slow = ScriptedResponse.ok(Self.png)
        slow.delayBeforeHeaders = 10
        server.route("/slow.png", slow)
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("slow"))
        defer { sink.remove() }
        let handle = FetchHandle()
        let started = monotonicSeconds()
        let canceller = Task {
            try? await Task.sleep(nanoseconds: 200_000_000)
            handle.cancel()
        }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/slow.png"), into: sink, handle: handle)
        await canceller.value
        guard case .failure(let error) = completed.result else { Issue.record("a cancelled fetch succeeded"); return }
        #expect(error.kind == .cancelled)
        #expect(calls == 1)
        #expect(monotonicSeconds() - started < 5, "the cancel stops the transfer, not the server's 10 s")
    }
}
