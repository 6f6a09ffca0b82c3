import DiskCache
import Support

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
            if let chunked = urls as? any URLChunkSequence {
                await self.runBatch(chunksOf: chunked, delivery, channel)
            } else {
                await self.runBatch(SingleURLChunks(base: urls.makeAsyncIterator()), delivery, channel)
            }
            channel.finish()
        }
        return LoadBatch(channel: channel, work: work)
    }

    public func batch(_ urls: [String], deliverTo delivery: Delivery? = nil) -> LoadBatch {
        batch(ArraySequence(urls), deliverTo: delivery)
    }

    private func runBatch<URLs: URLChunkSequence>(chunksOf urls: URLs, _ delivery: Delivery?, _ channel: BatchChannel) async {
        await runBatch(urls.makeAsyncIterator(), delivery, channel)
    }

    /// Takes the URLs a chunk at a time (at most what the backlog has room
    /// for), looks the chunk up (`planChunk`: on two threads), then, in
    /// input order, drops duplicates, queues the cache answers and starts
    /// the network loads. A URL that would wait for a free job slot holds
    /// up the ones after it, so events keep the input order.
    private func runBatch<URLs: URLChunkIterator>(_ urls: URLs, _ delivery: Delivery?, _ channel: BatchChannel) async {
        let jobs = max(1, options.jobs)
        var urls = urls
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            var seen = Set<MD5.Digest>()
            do {
                while !channel.isAbandoned {
                    let room = await channel.waitForRoom()
                    let chunk = try await urls.nextChunk(limit: min(room, Self.chunkLimit))
                    if chunk.isEmpty { break }
                    var events: [LoadEvent] = []
                    events.reserveCapacity(chunk.count)
                    var distinct = 0, duplicates = 0
                    // Part by part, each reversed and popped: every answer is moved out, not copied.
                    var parts = await planChunk(chunk, lookUp: !Task.isCancelled, seen: seen)
                    for index in parts.indices {
                        var planned: [PlannedURL] = []
                        swap(&planned, &parts[index])
                        planned.reverse()
                        while let item = planned.popLast() {
                            guard seen.insert(item.identity).inserted else {
                                duplicates += 1
                                continue
                            }
                            distinct += 1
                            guard let plan = item.plan, !Task.isCancelled else {
                                events.append(LoadEvent(url: item.shown, phase: .empty(.cancelled), duration: 0))
                                continue
                            }
                            switch plan {
                            case .done(let phase):
                                // A cache answer has no transient body: only `-o` needs `deliver` (its copy counts in the duration).
                                guard let delivery else {
                                    events.append(LoadEvent(url: item.shown, phase: phase, duration: item.duration))
                                    continue
                                }
                                let copyStart = monotonicSeconds()
                                let delivered = deliver(phase, url: item.shown, to: delivery)
                                events.append(LoadEvent(url: item.shown, phase: delivered,
                                                        duration: item.duration + monotonicSeconds() - copyStart))
                            case .network(let url, let key, let entry):
                                channel.send(contentsOf: &events, distinct: distinct, duplicates: duplicates)
                                distinct = 0
                                duplicates = 0
                                // The URL's time: its lookup, its own wait for a job slot, its transfer
                                // (not the waits of the URLs before it in the chunk).
                                let start = monotonicSeconds() - item.duration
                                if running >= jobs {
                                    await group.next()
                                    running -= 1
                                }
                                let shown = item.shown
                                if Task.isCancelled {
                                    channel.send(LoadEvent(url: shown, phase: .empty(.cancelled), duration: 0), urgent: false)
                                    continue
                                }
                                running += 1
                                channel.send(LoadEvent(url: shown, phase: .loading(storedCopy(entry)), duration: 0), urgent: true)
                                group.addTask {
                                    let phase = self.deliver(await self.tiered(url: url, key: key, entry: entry), url: shown, to: delivery)
                                    channel.send(LoadEvent(url: shown, phase: phase, duration: monotonicSeconds() - start), urgent: true)
                                }
                            case .revalidateInBackground(let stale, let url, let key, let entry):
                                // Reported at once, like a cache answer; the revalidation then takes a
                                // job slot like any transfer, and its outcome follows as a `refreshed` event.
                                events.append(LoadEvent(url: item.shown, phase: deliver(stale, url: item.shown, to: delivery), duration: item.duration))
                                channel.send(contentsOf: &events, distinct: distinct, duplicates: duplicates)
                                distinct = 0
                                duplicates = 0
                                if running >= jobs {
                                    await group.next()
                                    running -= 1
                                }
                                if Task.isCancelled { continue }   // the URL has its report; the refresh is not made
                                running += 1
                                let shown = item.shown
                                let start = monotonicSeconds()
                                group.addTask {
                                    let phase = self.deliver(await self.tiered(url: url, key: key, entry: entry), url: shown, to: nil)
                                    channel.send(LoadEvent(url: shown, phase: phase, duration: monotonicSeconds() - start,
                                                           refreshed: true), urgent: true)
                                }
                            }
                        }
                    }
                    channel.send(contentsOf: &events, distinct: distinct, duplicates: duplicates)
                }
            } catch {
                channel.send(LoadEvent(url: "", phase: .failure(LoadError(kind: .io, message: "reading the URL list: \(error)")), duration: 0), urgent: true)
            }
            await group.waitForAll()
        }
    }
}
