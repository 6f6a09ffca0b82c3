import Fetch
import Foundation
@testable import Loader
import Support
import Testing
import TestSupport

/// Host notes (`-v`: paused, limit changed, given up on) reach a batch's
/// consumer in order with its events, whatever the consumer's pace.
extension HostSchedulingTests {
    /// One host answers 429 once the other's three bodies are in, the other at
    /// once. The consumer reads slowly (0.4 s an event), so the fast host's events
    /// are still queued when the 429 comes. Its notes must be heard after them and
    /// before the 429's own failure. Before, a note went to its callback the moment
    /// it was decided, ahead of the events still queued (here after 5 of the 7).
    /// The 429 waits until the fast host's three events are in the batch's
    /// channel (an event, not 2 s a loaded machine's three fetches could outlast;
    /// nor their bodies' bytes, which are counted before each URL is checked,
    /// stored and sent, so the 429 overtook one in 1 of 6 runs at load 12).
    @Test func notesAreHeardAfterTheEventsBeforeThemAndBeforeTheEventsAfter() async throws {
        let slow = try ScriptedServer(), fast = try ScriptedServer()
        let running = Locked<LoadBatch?>(nil)
        let before = 1 + 2 * 3   // the slow URL's `loading`, and each fast URL's `loading` and `success`
        slow.route("/img") { _ in
            let deadline = monotonicSeconds() + 60   // ends a hang only
            while (running.withLock { $0?.eventsSent ?? 0 }) < before && monotonicSeconds() < deadline { usleep(5_000) }
            return ScriptedResponse.status(429, headers: [("Retry-After", "1")])
        }
        fast.route("/img", ScriptedResponse.ok(Self.body, contentType: "text/plain"))
        let urls = [slow.url("/img?0")] + (0..<3).map { fast.url("/img?\($0)") }
        let loader = loader(jobs: 8, perHost: 2) { options in
            options.acceptAnyContent = true
            options.fetch.retries = 1   // the 429's URL waits for its retry: the pause is said (one nothing waits on is not)
        }
        let log = Locked<[String]>([])
        let batch = loader.batch(ArraySequence(urls), hostNotes: { note in
            log.withLock { $0.append("note \(ResultLine.hostNote(note))") }
        })
        running.withLock { $0 = batch }
        for await event in batch {
            log.withLock { $0.append("\(event.phase.name) \(event.url)") }
            try? await Task.sleep(nanoseconds: 400_000_000)
        }
        let heard = log.withLock { $0 }
        let notes = heard.indices.filter { heard[$0].hasPrefix("note ") }
        #expect(notes.count == 2, "paused, and the limit halved: \(heard)")
        let fastEnds = heard.indices.filter { heard[$0].hasPrefix("success \(fast.baseURL)") }
        #expect(fastEnds.count == 3, "\(heard)")
        let slowEnd = try #require(heard.firstIndex { $0.hasPrefix("failure \(slow.baseURL)") }, "\(heard)")
        #expect(notes.allSatisfy { note in fastEnds.allSatisfy { $0 < note } && note < slowEnd }, "\(heard)")
        #expect(heard[notes[0]].contains("answered 429: paused for"), "\(heard)")
    }
}
