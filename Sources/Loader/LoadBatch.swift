import DiskCache
import Fetch

/// A batch run: the events of many URLs as each changes phase, with at most
/// `jobs` network loads at once. Each distinct URL (after normalisation) is
/// loaded once and reported once, however often it is listed.
///
/// Memory stays flat however long the list: URLs are read lazily, the batch
/// runs at most `backlog` events ahead of the consumer (it waits for the
/// consumer rather than buffering: `BatchChannel`), and only the set of seen keys (16 bytes
/// per distinct URL) grows.
///
/// `cancel()` stops the work but keeps the sequence going until every URL
/// has its terminal event (in flight: `failure`/`cancelled`; not started:
/// `empty`/`cancelled`) — what a command line needs on Ctrl-C. URLs still
/// unread when `cancel()` comes are read and reported `empty`/`cancelled`
/// too, as far as the URL sequence delivers them. Cancelling the task that
/// iterates drops the events and cancels the work.
public struct LoadBatch: AsyncSequence, Sendable {
    public typealias Element = LoadEvent
    private let channel: BatchChannel
    private let work: Task<Void, Never>

    init(channel: BatchChannel, work: Task<Void, Never>) {
        self.channel = channel
        self.work = work
    }

    /// Events a batch may run ahead of its consumer before it waits.
    public static let defaultBacklog = 1024

    public func cancel() { work.cancel() }

    /// Stops at once: cancels the work and ends the sequence without the
    /// events not yet taken (for a consumer that can no longer use them,
    /// such as a command whose output pipe was closed).
    public func stop() {
        channel.abandon()
        work.cancel()
    }

    /// Returns once the work has wound down: transfers aborted and their
    /// temporary files removed.
    public func finished() async { await work.value }

    /// Distinct URLs taken up so far, and listed URLs skipped as duplicates
    /// of an earlier one (they get no events). For progress displays.
    public var counts: (distinct: Int, duplicates: Int) { channel.counts }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let channel: BatchChannel
        let work: Task<Void, Never>

        public mutating func next() async -> LoadEvent? {
            await channel.next(onAbandon: { [work] in work.cancel() })
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(channel: channel, work: work)
    }
}

extension ImageLoader {
    /// Runs a batch over `urls`, read lazily (a million-line input streams
    /// through; only the set of seen keys grows). `delivery` also receives
    /// each successful body (meant for a one-URL batch: `-o`).
    public func batch<URLs: AsyncSequence & Sendable>(
        _ urls: URLs, backlog: Int = LoadBatch.defaultBacklog, deliverTo delivery: Delivery? = nil
    ) -> LoadBatch where URLs.Element == String {
        let channel = BatchChannel(backlog: backlog)
        let work = Task {
            await self.runBatch(urls, delivery, channel)
            channel.finish()
        }
        return LoadBatch(channel: channel, work: work)
    }

    public func batch(_ urls: [String], deliverTo delivery: Delivery? = nil) -> LoadBatch {
        batch(ArraySequence(urls), deliverTo: delivery)
    }

    private func runBatch<URLs: AsyncSequence>(_ urls: URLs, _ delivery: Delivery?, _ channel: BatchChannel) async
    where URLs.Element == String {
        let jobs = max(1, options.jobs)
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            var seen = Set<SeenKey>()
            do {
                for try await url in urls {
                    if channel.isAbandoned { break }
                    guard seen.insert(SeenKey(url)).inserted else {
                        channel.countDuplicate()
                        continue
                    }
                    channel.countDistinct()
                    await channel.waitForRoom()
                    let shown = redactURL(url)
                    if Task.isCancelled {
                        channel.send(LoadEvent(url: shown, phase: .empty(.cancelled), duration: 0), urgent: false)
                        continue
                    }
                    let start = monotonicSeconds()
                    switch plan(url) {
                    case .done(let phase):
                        channel.send(LoadEvent(url: shown, phase: deliver(phase, to: delivery), duration: monotonicSeconds() - start),
                                     urgent: false)
                    case .network(let url, let key, let entry):
                        if running >= jobs {
                            await group.next()
                            running -= 1
                        }
                        if Task.isCancelled {
                            channel.send(LoadEvent(url: shown, phase: .empty(.cancelled), duration: 0), urgent: false)
                            continue
                        }
                        running += 1
                        channel.send(LoadEvent(url: shown, phase: .loading, duration: 0), urgent: true)
                        group.addTask {
                            let phase = self.deliver(await self.network(url: url, key: key, entry: entry), to: delivery)
                            channel.send(LoadEvent(url: shown, phase: phase, duration: monotonicSeconds() - start), urgent: true)
                        }
                    }
                }
            } catch {
                channel.send(LoadEvent(url: "", phase: .failure(LoadError(kind: .io, message: "reading the URL list: \(error)")), duration: 0), urgent: true)
            }
            await group.waitForAll()
        }
    }
}

/// The identity of a URL within a batch: two independently seeded 64-bit
/// hashes of its normalised form (of the text itself when it does not
/// parse), 16 bytes in all. Two distinct URLs of a million-line list collide
/// with a probability of about 10^-27.
struct SeenKey: Hashable {
    let first: Int
    let second: Int

    init(_ url: String) {
        let identity = (try? CacheKey.normalize(url)) ?? url
        var a = Hasher()
        a.combine(0x5EED_0001)
        a.combine(identity)
        var b = Hasher()
        b.combine(0x5EED_0002)
        b.combine(identity)
        first = a.finalize()
        second = b.finalize()
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
