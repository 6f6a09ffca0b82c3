import Fetch
import Loader
import Testing
import TestSupport

extension HostSchedulingTests {
    /// A host that refuses every connection is given up on after 3 connect
    /// failures in a row, and the message says so ("connect failures", kind
    /// `connect`), as a host that never answers gets "timeouts": a refusal
    /// reaches the scheduler as one (`HostAttemptGate.outcome`).
    @Test func aHostThatRefusesConnectionsIsGivenUpForConnectFailures() async throws {
        let urls = (0..<8).map { "http://127.0.0.1:1/img?\($0)" }   // nothing listens on port 1
        let loader = loader(jobs: 8, perHost: 3) { options in
            options.acceptAnyContent = true
            options.fetch.retries = 0
        }
        let recorder = Recorder()
        let terminal = await Self.run(loader.batch(ArraySequence(urls), hostNotes: { recorder.note($0) }))
        // The first attempt alone, then up to 3 at once, each refusal freeing a slot for the next:
        // at most 5 are tried before the third refusal gives the host up.
        #expect(terminal.count == 8 && terminal.allSatisfy { $0.phase.error?.kind == .connect },
                "\(terminal.map { $0.phase.error?.message ?? "" })")
        let message = "host 127.0.0.1:1 gave 3 connect failures in a row; not tried again in this run"
        let messages = terminal.map { $0.phase.error?.message ?? "" }
        #expect(messages.filter { $0 == "could not connect: " + message }.count >= 3, "\(messages)")
        #expect(messages.allSatisfy { $0 == "could not connect: " + message || $0.contains("Couldn't connect to server") },
                "\(messages)")
        let host = try #require(HostKey(normalizedURL: urls[0]))
        #expect(recorder.notes == [.gaveUp(host, HostFailure(kind: .connect, message: message))], "\(recorder.notes)")
    }
}
