import DiskCache
import Fetch
import Foundation
import Loader
import Support
import Testing
import TestSupport

/// A URL list that counts how far it has been read, optionally stalling
/// (as a slow pipe would) after `pauseAfter` URLs until the reading task is
/// cancelled.
final class CountingURLs: AsyncSequence, Sendable {
    typealias Element = String
    let count: Int
    let make: @Sendable (Int) -> String
    let pauseAfter: Int?
    private let read = Locked(0)

    init(count: Int, pauseAfter: Int? = nil, make: @escaping @Sendable (Int) -> String) {
        self.count = count
        self.pauseAfter = pauseAfter
        self.make = make
    }

    var taken: Int { read.withLock { $0 } }

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: CountingURLs
        mutating func next() async -> String? {
            let index = source.read.withLock { read -> Int in
                read += 1
                return read - 1
            }
            guard index < source.count else { return nil }
            if let pause = source.pauseAfter, index == pause {
                while !Task.isCancelled { try? await Task.sleep(nanoseconds: 5_000_000) }
            }
            return source.make(index)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: self) }
}

@Suite(.timeLimit(.minutes(3))) struct LoadBatchTests {
    let directory: TempDirectory
    let loader: ImageLoader

    init() throws {
        directory = try TempDirectory(prefix: "loadbatch")
        var options = LoaderOptions()
        options.offline = true
        loader = ImageLoader(cache: try DiskCacheStore(directory: directory.path + "/cache"), options: options)
    }

    @Test func aBatchRunsAtMostItsBacklogAheadOfASlowConsumer() async throws {
        let urls = CountingURLs(count: 20_000) { "http://127.0.0.1:9/\($0).png" }
        let batch = loader.batch(urls, backlog: 64)
        var iterator = batch.makeAsyncIterator()
        _ = await iterator.next()
        try await Task.sleep(nanoseconds: 200_000_000)   // the consumer dawdles
        #expect(urls.taken <= 64 + 2, "read \(urls.taken) URLs ahead of a consumer that took one")
        var total = 1
        while await iterator.next() != nil { total += 1 }
        #expect(total == 20_000)
    }

    /// The smallest backlog: the producer waits after every event, and each
    /// event taken must let it go on (it once waited forever here). Also
    /// with a consumer that waits for runs longer than the backlog
    /// (`EventDemandTests.relaxed`): a full backlog wakes it all the same.
    @Test(arguments: [1, 2, 3, 100], [EventDemand.everything, EventDemandTests.relaxed])
    func aTinyBacklogNeverStallsTheBatch(backlog: Int, demand: EventDemand) async throws {
        let urls = CountingURLs(count: 2_000) { "http://127.0.0.1:9/\($0).png" }
        let batch = loader.batch(urls, backlog: backlog, demand: demand)
        let counter = Task { () -> Int in
            var total = 0
            for await _ in batch { total += 1 }
            return total
        }
        let watchdog = Task {
            try await Task.sleep(nanoseconds: 20_000_000_000)
            counter.cancel()
        }
        let total = await counter.value
        watchdog.cancel()
        #expect(total == 2_000, "the batch stalled after \(total) events")
    }

    @Test func duplicatesAreReportedOnceAndCounted() async throws {
        let list = ["http://127.0.0.1:9/a.png", "HTTP://127.0.0.1:9/a.png", "http://127.0.0.1:80/b.png",
                    "http://127.0.0.1/b.png", "http://127.0.0.1:9/a.png#top", "not a url", "not a url"]
        let batch = loader.batch(list)
        var urls: [String] = []
        for await event in batch { urls.append(event.url) }
        #expect(urls == ["http://127.0.0.1:9/a.png", "http://127.0.0.1:80/b.png", "not a url"])
        #expect(batch.counts.distinct == 3 && batch.counts.duplicates == 4)
    }

    /// After `cancel()`, URLs not read yet are still read and reported
    /// `empty`/`cancelled`: every URL gets its one terminal event.
    @Test func cancelReportsEveryURLIncludingUnreadOnes() async throws {
        let urls = CountingURLs(count: 500, pauseAfter: 10) { "http://127.0.0.1:9/\($0).png" }
        let batch = loader.batch(urls)
        var events: [LoadEvent] = []
        for await event in batch {
            events.append(event)
            if events.count == 5 { batch.cancel() }
        }
        #expect(events.count == 500)
        #expect(Set(events.map(\.url)).count == 500)
        let cancelled = events.filter { if case .empty(.cancelled) = $0.phase { return true } else { return false } }
        #expect(cancelled.count >= 490, "\(cancelled.count) cancelled")
    }

    /// The list stalls after 3 URLs (a pipe with no more lines yet); the
    /// consumer is cancelled once it has their 3 events, and the sequence
    /// ends then, not when the list does.
    @Test func cancellingTheConsumingTaskEndsTheSequence() async throws {
        let urls = CountingURLs(count: 1_000_000, pauseAfter: 3) { "http://127.0.0.1:9/\($0).png" }
        let batch = loader.batch(urls)
        let seenSoFar = Locked(0)
        let consumer = Task {
            for await _ in batch { seenSoFar.withLock { $0 += 1 } }
            return seenSoFar.withLock { $0 }
        }
        let deadline = monotonicSeconds() + 30
        while (seenSoFar.withLock({ $0 }) < 3 || urls.taken < 4) && monotonicSeconds() < deadline {
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        #expect(seenSoFar.withLock { $0 } >= 3 && urls.taken == 4, "the list is read up to its stall, its 3 URLs reported")
        consumer.cancel()
        let seen = await consumer.value
        #expect(seen >= 3 && seen < 1_000_000, "\(seen) events")
        let taken = urls.taken
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(urls.taken <= taken + 1, "the work stopped reading")
    }
}
