import DiskCache
import Fetch
import Loader
import Support
import Testing
import TestSupport

/// The cache-hit fast path of a batch: URLs taken in chunks, looked up on
/// two tasks, queued a chunk at a time. What a user sees must not change:
/// input order, one event per distinct URL, cancellation reaching every URL.
@Suite struct BatchFastPathTests {
    let directory: TempDirectory
    let store: DiskCacheStore
    let loader: ImageLoader

    init() throws {
        directory = try TempDirectory(prefix: "batchfast")
        store = try DiskCacheStore(directory: directory.path + "/cache")
        var options = LoaderOptions()
        options.offline = true
        loader = ImageLoader(cache: store, options: options)
    }

    /// A remembered 404 for `url`: an --offline batch answers it from the
    /// cache (`failure`, source `cache`) without the network.
    func remember404(_ url: String) throws {
        let now = currentUnixTime()
        let meta = CacheMetadata(url: url, status: 404, requestTime: now, responseTime: now,
                                 headers: [CacheMetadata.Header("Cache-Control", "max-age=3600")], hasBody: false)
        try store.storeWithoutBody(meta, key: try CacheKey(url: url).hex)
    }

    /// Every third URL cached, the others misses, with invalid URLs and
    /// duplicates (another spelling of an earlier URL) mixed in.
    func mixedList(count: Int) throws -> (list: [String], expected: [(url: String, phase: String)]) {
        var list: [String] = []
        var expected: [(String, String)] = []
        for index in 0..<count {
            let url = "http://127.0.0.1:9/fast/\(index).png"
            if index % 3 == 0 {
                try remember404(url)
                expected.append((url, "failure"))
            } else {
                expected.append((url, "empty"))
            }
            list.append(url)
            if index % 97 == 5 {
                list.append("HTTP://127.0.0.1:9/fast/\(index).png#again")   // a duplicate: no event
            }
            if index % 101 == 7 {
                list.append("ftp://127.0.0.1/\(index)")
                expected.append(("ftp://127.0.0.1/\(index)", "failure"))
            }
        }
        return (list, expected)
    }

    @Test func aPassOfCacheAnswersKeepsTheInputOrder() async throws {
        let (list, expected) = try mixedList(count: 1_200)
        var seen: [(url: String, phase: String)] = []
        for await event in loader.batch(list) { seen.append((event.url, event.phase.name)) }
        #expect(seen.count == expected.count)
        #expect(firstDifference(seen.map(\.url), expected.map(\.url)) == nil, "events out of input order")
        #expect(firstDifference(seen.map(\.phase), expected.map(\.phase)) == nil)
        let cached = seen.filter { $0.phase == "failure" && $0.url.hasPrefix("http") }.count
        #expect(cached == 400)
    }

    /// Duplicates inside one chunk, near and far from their first spelling
    /// (so that the two tasks looking the chunk up often take the first and
    /// the repeat in different blocks): the first spelling is reported, once,
    /// in its place.
    @Test func duplicatesInsideAChunkKeepTheirFirstSpellingAndPlace() async throws {
        var list: [String] = []
        var expected: [String] = []
        for index in 0..<600 {
            let url = "http://127.0.0.1:9/dup/\(index).png"
            if index % 2 == 0 { try remember404(url) }
            list.append(url)
            expected.append(url)
            for back in [1, 9, 40] where index % back == 0 && index >= back {
                list.append("HTTP://127.0.0.1:9/dup/\(index - back).png#again")
            }
        }
        let batch = loader.batch(list)
        var seen: [String] = []
        for await event in batch { seen.append(event.url) }
        #expect(firstDifference(seen, expected) == nil, "a repeat reported, or an event out of input order")
        #expect(batch.counts.distinct == 600 && batch.counts.duplicates == list.count - 600)
    }

    /// Taking the events a run at a time (`next(into:limit:)`, what the
    /// tool's reporter does) gives the same events in the same order, never
    /// more than `limit` at once, then an empty run at the end.
    @Test func runsOfEventsAreTheEventsInOrder() async throws {
        let (list, expected) = try mixedList(count: 1_200)
        let batch = loader.batch(list)
        var events: [LoadEvent] = []
        var seen: [String] = []
        var largest = 0
        while true {
            await batch.next(into: &events, limit: 50)
            if events.isEmpty { break }
            largest = max(largest, events.count)
            seen.append(contentsOf: events.map(\.url))
        }
        #expect(firstDifference(seen, expected.map(\.url)) == nil)
        #expect(largest <= 50 && largest > 1, "runs of at most 50 events, and more than one at a time: \(largest)")
        await batch.next(into: &events, limit: 50)
        #expect(events.isEmpty)
    }

    /// A list that cannot be taken in chunks (any `AsyncSequence`) gives the
    /// same events as one that can.
    @Test func aOneByOneListGivesTheSameEvents() async throws {
        let (list, expected) = try mixedList(count: 600)
        let urls = CountingURLs(count: list.count) { list[$0] }
        var seen: [String] = []
        for await event in loader.batch(urls) { seen.append(event.url) }
        #expect(firstDifference(seen, expected.map(\.url)) == nil)
    }

    /// Ctrl-C in the middle of a pass of cache answers: every URL still gets
    /// exactly one event, in input order; those not yet looked up are
    /// `empty`/`cancelled`.
    @Test func cancellingInTheMiddleOfAPassReportsEveryURLOnceInOrder() async throws {
        let list = (0..<8_000).map { "http://127.0.0.1:9/cancel/\($0).png" }
        for url in list.prefix(300) { try remember404(url) }
        let batch = loader.batch(list)
        var urls: [String] = []
        var cancelled = 0
        for await event in batch {
            urls.append(event.url)
            if case .empty(.cancelled) = event.phase { cancelled += 1 }
            if urls.count == 100 { batch.cancel() }
        }
        #expect(urls.count == list.count)
        #expect(firstDifference(urls, list) == nil, "every URL once, in input order")
        #expect(cancelled >= 8_000 - 100 - Defaults.batchBacklog - 256, "\(cancelled) cancelled")
        #expect(batch.counts.distinct == 8_000)
    }

    @Test func oneNormalisationGivesTheKeyAndTheIdentity() throws {
        for url in ["http://a.test/x", "HTTP://A.test:80/x#f", "https://[::1]:443/p?q", "not a url", "http://h:bad/"] {
            let (key, identity) = CacheKey.identify(url)
            switch key {
            case .success(let key):
                #expect(key == (try CacheKey(url: url)))
                #expect(identity.hex == key.hex)
            case .failure:
                #expect(throws: DiskCacheError.self) { try CacheKey(url: url) }
                #expect(identity.hex == MD5.hex(url))
            }
        }
        #expect(CacheKey.identify("HTTP://A.test:80/x#f").identity == CacheKey.identify("http://a.test/x").identity)
    }

    /// Where two lists first differ, as "index: got ≠ expected" (short, unlike the lists).
    func firstDifference(_ got: [String], _ expected: [String]) -> String? {
        for index in 0..<max(got.count, expected.count) {
            let a = index < got.count ? got[index] : "(none)"
            let b = index < expected.count ? expected[index] : "(none)"
            if a != b { return "\(index): \(a) ≠ \(b)" }
        }
        return nil
    }
}
