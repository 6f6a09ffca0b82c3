import DiskCache
import Fetch

/// A batch run: the events of many URLs as each changes phase, with at most
/// `jobs` network loads at once. Each distinct URL (after normalisation) is
/// loaded once and reported once, however often it is listed.
///
/// `cancel()` stops the work but keeps the sequence going until every URL
/// has its terminal event (in flight: `failure`/`cancelled`; not started:
/// `empty`/`cancelled`) — what a command line needs on Ctrl-C. Cancelling
/// the task that iterates drops the events and cancels the work.
public struct LoadBatch: AsyncSequence, Sendable {
    public typealias Element = LoadEvent
    private let stream: AsyncStream<LoadEvent>
    private let work: Task<Void, Never>

    init(stream: AsyncStream<LoadEvent>, work: Task<Void, Never>) {
        self.stream = stream
        self.work = work
    }

    public func cancel() { work.cancel() }

    public func makeAsyncIterator() -> AsyncStream<LoadEvent>.Iterator { stream.makeAsyncIterator() }
}

extension ImageLoader {
    /// Runs a batch over `urls`, read lazily (a million-line input streams
    /// through; only the set of seen keys grows). `delivery` also receives
    /// each successful body (meant for a one-URL batch: `-o`).
    public func batch<URLs: AsyncSequence & Sendable>(_ urls: URLs, deliverTo delivery: Delivery? = nil) -> LoadBatch
    where URLs.Element == String {
        let (stream, continuation) = AsyncStream<LoadEvent>.makeStream()
        let work = Task {
            await self.runBatch(urls, delivery, continuation)
            continuation.finish()
        }
        continuation.onTermination = { termination in
            if case .cancelled = termination { work.cancel() }
        }
        return LoadBatch(stream: stream, work: work)
    }

    public func batch(_ urls: [String], deliverTo delivery: Delivery? = nil) -> LoadBatch {
        batch(ArraySequence(urls), deliverTo: delivery)
    }

    private func runBatch<URLs: AsyncSequence>(_ urls: URLs, _ delivery: Delivery?, _ events: AsyncStream<LoadEvent>.Continuation) async
    where URLs.Element == String {
        let jobs = max(1, options.jobs)
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            var seen = Set<String>()
            do {
                for try await url in urls {
                    let shown = redactURL(url)
                    let identity = (try? CacheKey.normalize(url)) ?? url
                    guard seen.insert(identity).inserted else { continue }
                    if Task.isCancelled {
                        events.yield(LoadEvent(url: shown, phase: .empty(.cancelled), duration: 0))
                        continue
                    }
                    let start = monotonicSeconds()
                    switch plan(url) {
                    case .done(let phase):
                        events.yield(LoadEvent(url: shown, phase: deliver(phase, to: delivery), duration: monotonicSeconds() - start))
                    case .network(let url, let key, let entry):
                        if running >= jobs {
                            await group.next()
                            running -= 1
                        }
                        if Task.isCancelled {
                            events.yield(LoadEvent(url: shown, phase: .empty(.cancelled), duration: 0))
                            continue
                        }
                        running += 1
                        events.yield(LoadEvent(url: shown, phase: .loading, duration: 0))
                        group.addTask {
                            let phase = self.deliver(await self.network(url: url, key: key, entry: entry), to: delivery)
                            events.yield(LoadEvent(url: shown, phase: phase, duration: monotonicSeconds() - start))
                        }
                    }
                }
            } catch {
                events.yield(LoadEvent(url: "", phase: .failure(LoadError(kind: .io, message: "reading the URL list: \(error)")), duration: 0))
            }
            await group.waitForAll()
        }
    }
}

/// An array as an `AsyncSequence`.
public struct ArraySequence<Element: Sendable>: AsyncSequence, Sendable {
    let elements: [Element]
    public init(_ elements: [Element]) { self.elements = elements }
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: IndexingIterator<[Element]>
        public mutating func next() async -> Element? { base.next() }
    }
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: elements.makeIterator()) }
}
