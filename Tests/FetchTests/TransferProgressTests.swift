import Fetch
import Foundation
import Testing
import TestSupport

/// `FetchConfiguration.progress` counts body bytes as they arrive (what the
/// progress bar samples), against a real server on 127.0.0.1.
@Suite(.timeLimit(.minutes(3))) struct TransferProgressTests {
    @Test func countsBytesWhileTheyArriveAndSettlesWhenDone() async throws {
        let server = try ScriptedServer()
        var slow = ScriptedResponse(status: 200, headers: [("Content-Type", "application/octet-stream")])
        slow.generatedBodyLength = 1 << 20
        server.route("/slow.bin", slow.trickled(chunk: 64 * 1024, interval: 0.03))
        // No Content-Length: the body ends when the connection closes.
        var undeclared = ScriptedResponse(status: 200, headers: [("Content-Type", "application/octet-stream")],
                                          body: Array(repeating: 7, count: 300_000))
        undeclared.omitContentLength = true
        server.route("/undeclared.bin", undeclared)
        server.route("/missing.bin", .status(404, body: "not here"))
        let progress = TransferProgress()
        let harness = try FetchHarness { $0.progress = progress }

        let fetching = Task { try await harness.fetch(server.url("/slow.bin")) }
        let midway = await eventually(within: 10) { progress.receivedBytes > 0 && progress.receivedBytes < 1 << 20 }
        #expect(midway, "bytes counted before the body has finished")
        #expect(progress.expectedBytes == 1 << 20 && progress.bodiesInFlight == 1, "the declared length, while in flight")
        let outcome = try await fetching.value
        #expect(outcome.body.count == 1 << 20)
        #expect(progress.receivedBytes == 1 << 20 && progress.expectedBytes == 1 << 20 && progress.bodiesInFlight == 0)

        let unknown = try await harness.fetch(server.url("/undeclared.bin"))
        #expect(unknown.body.count == 300_000)
        #expect(progress.unknownLengths == 0, "a body of undeclared length is counted as received once it ends")
        #expect(progress.expectedBytes == (1 << 20) + 300_000 && progress.receivedBytes == progress.expectedBytes)

        _ = try await harness.fetch(server.url("/missing.bin"))
        #expect(progress.receivedBytes == (1 << 20) + 300_000, "an error response's body is not counted")
    }
}
