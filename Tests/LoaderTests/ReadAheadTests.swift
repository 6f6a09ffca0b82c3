import Fetch
import Loader
import Support
import Testing
import TestSupport

/// How far a batch reads its list ahead of the transfers (`Defaults.batchQueueLimit`):
/// far enough that hosts listed late start early, and bounded in memory. A
/// queued revalidation holds its stored entry (~1.2 KB), so it counts
/// `Defaults.batchStoredEntryWeight` times.
@Suite struct ReadAheadTests {
    /// 1,400 cached URLs of one host, revalidated (`--refresh`) one at a time
    /// while the host holds its first answer: the batch reads about 1,024 of
    /// them ahead (a cold list of the same length is read whole).
    @Test func queuedRevalidationsCountMoreAgainstTheReadAhead() async throws {
        let h = try LoaderHarness()
        defer { h.server.stop() }
        let stall = Locked(false)
        h.server.route("/img.png") { _ in
            var response = ScriptedResponse.ok(LoaderHarness.png,
                                               headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=3600")])
            if stall.withLock({ $0 }) { response.delayBeforeHeaders = 2 }
            return response
        }
        let total = 1_400
        let url: @Sendable (Int) -> String = { [base = h.server.url("/img.png")] in "\(base)?i=\($0)" }
        let warm = h.loader { $0.jobs = 8; $0.jobsPerHost = 8 }
        var stored = 0
        for await event in warm.batch(CountingURLs(count: total, make: url)) where event.phase.isTerminal {
            if case .success = event.phase { stored += 1 }
        }
        #expect(stored == total)

        stall.withLock { $0 = true }
        let urls = CountingURLs(count: total, make: url)
        let batch = h.loader { $0.refresh = true; $0.jobs = 1; $0.jobsPerHost = 1 }.batch(urls)
        let consumer = Task { for await _ in batch {} }
        #expect(await h.server.requestsArrive("/img.png", count: total + 1))
        // The reader reads up to the limit (however loaded the machine), then waits: give it time to overrun.
        let expected = Defaults.batchQueueLimit / Defaults.batchStoredEntryWeight
        let deadline = monotonicSeconds() + 20
        while urls.taken < expected && monotonicSeconds() < deadline { try await Task.sleep(nanoseconds: 10_000_000) }
        try await Task.sleep(nanoseconds: 300_000_000)
        let taken = urls.taken
        batch.cancel()
        await consumer.value
        #expect(taken >= expected, "read \(taken) revalidations ahead")
        #expect(taken < expected + 256, "read \(taken) revalidations ahead (a queued one holds its stored entry)")
    }
}
