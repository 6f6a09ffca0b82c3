import Foundation
import Loader
import Support
import Testing
import TestSupport

/// A host's first answer opens its other slots (before it, at most
/// `unansweredLimit` run), unless that answer is a pushback.
extension HostSchedulingTests {
    /// The first three requests to a fresh host get 429 with `Retry-After: 1`.
    /// Their status lines opened the host's other slots before the 429s paused
    /// it, so three more requests went out at once and were turned away too;
    /// now nothing more goes to the host until its pause is over.
    @Test func aFirstAnswerThatIsAPushbackOpensNoMoreSlots() async throws {
        let server = try ScriptedServer()
        let recorder = Recorder()
        let counter = Locked(0)
        server.route("/img", handler: { _ in
            recorder.request(server.port)
            let index = counter.withLock { count -> Int in
                count += 1
                return count
            }
            if index <= 3 { return ScriptedResponse.status(429, headers: [("Retry-After", "1")]).delayed(0.1) }
            return ScriptedResponse.ok(Self.body, contentType: "text/plain")
        })
        let loader = loader(jobs: 8, perHost: 6) { options in
            options.acceptAnyContent = true
            options.fetch.retries = 1
        }
        let terminal = await Self.run(loader.batch(ArraySequence((0..<8).map { server.url("/img?\($0)") })))
        #expect(terminal.count == 8 && terminal.allSatisfy { $0.phase.result != nil }, "\(terminal.compactMap(\.phase.error))")
        let times = recorder.times(server.port)
        #expect(times.count == 11, "\(times.count) requests")   // 8 URLs, and the 3 pushed back again
        // The three first requests, then nothing until the pause ends (1 s after the 429s, 0.1 s after the start).
        let early = times.filter { $0 < times[0] + 0.9 }
        #expect(early.count == 3, "\(times.map { $0 - times[0] })")
    }
}
