import DiskCache
import Fetch
import RemoteCache
import Support

/// A batch run: the events of many URLs as each changes phase, with at most
/// `jobs` network loads at once and at most `jobsPerHost` to one host, the
/// hosts scheduled by a `HostScheduler` (round robin, pauses on 429/503,
/// give-up on dead hosts). Each distinct URL (after normalisation) is
/// loaded once and reported once, however often it is listed.
///
/// Memory stays flat however long the list: URLs are read lazily, the batch
/// runs at most `backlog` events ahead of the consumer (it waits for the
/// consumer rather than buffering: `BatchChannel`), hosts' queues hold at
/// most about `Defaults.batchQueueLimit` URLs (or `backlog`, if larger), and only the set
/// of seen keys (`DigestSet`: about 24 bytes per distinct URL) and 8 bytes
/// per distinct host grow.
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
    private let dispatch: HostDispatch
    private let work: Task<Void, Never>

    init(channel: BatchChannel, dispatch: HostDispatch, work: Task<Void, Never>) {
        self.channel = channel
        self.dispatch = dispatch
        self.work = work
    }

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

    /// Events sent so far, heard or not (a note decided now is heard after
    /// them). For tests of that order.
    var eventsSent: Int { channel.eventsSent }

    /// Hosts scheduled, paused at least once and given up on, so far.
    public var hostCounts: HostCounts { dispatch.counts }

    /// Hosts with a transfer running now, and hosts paused now (for a progress display).
    public var hostActivity: (active: Int, paused: Int) { dispatch.activity }
    /// Transfers holding a slot now (the progress bar: no ETA by URLs while every URL left is one of them).
    public var transfersRunning: Int { dispatch.running }

    /// The next events, in order, as many as are queued (at most `limit`),
    /// waiting only for the first: `events` is emptied, then filled; left
    /// empty at the end of the sequence. The same events as iterating, a
    /// run at a time (do not mix the two on one batch).
    public func next(into events: inout [LoadEvent], limit: Int) async {
        await channel.next(into: &events, limit: limit, onAbandon: { [work] in work.cancel() })
    }

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
    /// each successful body (meant for a one-URL batch: `-o`). `hostNotes`
    /// hears when a host is paused, its limit changes or it is given up on,
    /// on the consuming task, in order with the events: after every event
    /// the batch sent before the note, before those it sent after.
    /// `demand` says which events the consumer reads and how soon it must
    /// have them (without `loading`, none is made).
    /// `cancelled`: the batch starts cancelled (a signal came before it
    /// began): its scheduler refuses every load before the work exists, so
    /// none starts, not even the first (a `cancel()` right after this
    /// returned came after the work had started one); every URL is `empty`.
    public func batch<URLs: AsyncSequence & Sendable>(
        _ urls: URLs, backlog: Int = Defaults.batchBacklog, deliverTo delivery: Delivery? = nil,
        hostNotes: (@Sendable (HostNote) -> Void)? = nil, demand: EventDemand = .everything, cancelled: Bool = false
    ) -> LoadBatch where URLs.Element == String {
        let channel = BatchChannel(backlog: backlog, demand: demand.bounded, onNote: hostNotes)
        let dispatch = hostDispatch(backlog: backlog, delivery: delivery, channel: channel, notes: hostNotes,
                                    loading: demand.loading)
        if cancelled { dispatch.cancel() }
        let work = Task {
            if let chunked = urls as? any URLChunkSequence {
                await self.runBatch(chunksOf: chunked, delivery, channel, dispatch)
            } else {
                await self.runBatch(SingleURLChunks(base: urls.makeAsyncIterator()), delivery, channel, dispatch)
            }
            channel.finish()
        }
        if cancelled { work.cancel() }
        return LoadBatch(channel: channel, dispatch: dispatch, work: work)
    }

    /// `batch` over a list in memory (the same parameters).
    public func batch(_ urls: [String], deliverTo delivery: Delivery? = nil,
                      hostNotes: (@Sendable (HostNote) -> Void)? = nil, demand: EventDemand = .everything) -> LoadBatch {
        batch(ArraySequence(urls), deliverTo: delivery, hostNotes: hostNotes, demand: demand)
    }

    /// The remote tier's reads, as the batch's scheduler knows them
    /// (`HostPolicy.lane`): a URL with nothing stored locally asks the tier
    /// in this lane, then waits for its origin's slot only if the tier did
    /// not answer it. In its origin's slot instead, a run the tier answered
    /// read one object at a time: an origin never contacted never resolves,
    /// and an unresolved host runs one transfer (`HostPolicy.startLimit`).
    static let tierLane = HostKey(origin: "remote-cache:", name: "remote cache")

    /// `--jobs`, `--jobs-per-host`, and the tier's lane when there is a tier.
    private var hostPolicy: HostPolicy {
        var policy = HostPolicy(jobs: options.jobs, jobsPerHost: options.jobsPerHost)
        if options.remote != nil {
            policy.lane = Self.tierLane
            policy.laneLimit = RemoteDefaults.reads
        }
        return policy
    }

    /// The batch's host scheduler, and what becomes of a URL it fails or
    /// cancels without starting.
    private func hostDispatch(backlog: Int, delivery: Delivery?, channel: BatchChannel,
                              notes: (@Sendable (HostNote) -> Void)?, loading: Bool) -> HostDispatch {
        // Through the channel, to be heard in order with the events (`notes` is the channel's `onNote`).
        var onNote: (@Sendable (HostNote) -> Void)?
        if notes != nil { onNote = { note in channel.send(note: note) } }
        return HostDispatch(
            policy: hostPolicy,
            // Queued URLs wait in memory, read ahead of the transfers (see `Defaults.batchQueueLimit`).
            queueLimit: max(backlog, Defaults.batchQueueLimit, min(options.jobs, Int.max / 2) * 2),
            onNote: onNote,
            onGaveUp: { [client] host, failure in
                // Its attempts with no answer yet (still connecting, waiting to share a connection that
                // never comes, or with their request sent) fail now with the reason, not at the end of
                // their timeouts.
                client.endUnansweredAttempts(toHostOf: host.origin, failing: failure.errorKind, detail: failure.message)
            },
            onFail: { [self] load, failure in
                let phase = hostGaveUp(failure, url: load.url, key: load.key, entry: load.entry)
                channel.send(LoadEvent(url: load.shown, phase: deliver(phase, url: load.shown, to: load.refresh ? nil : delivery),
                                       duration: load.lookup, refreshed: load.refresh), urgent: true)
            },
            onStarted: { [self] loads in
                // Nobody reads them: none is made (the scheduler's step runs on a transfer loop's thread).
                guard loading else { return }
                // Sent as the scheduler starts them (in input order per host, when slots are free), all
                // at once and not urgent: the consumer is woken by the run of events or its latency.
                var events: [LoadEvent] = []
                events.reserveCapacity(loads.count)
                for load in loads where !load.refresh && !load.tierAsked {   // reported when the tier's lane started it
                    events.append(LoadEvent(url: load.shown, phase: .loading(storedCopy(load.entry)), duration: 0))
                }
                channel.send(contentsOf: &events, distinct: 0, duplicates: 0)
            },
            onCancelled: { load in
                // A refresh's URL has its report already; the refresh is not made.
                if load.refresh { return }
                // One the tier's lane started (its `loading` sent, the tier asked) was in flight: it is
                // cancelled as a transfer is (SPEC §6), not "before it started".
                let phase: Phase = load.tierAsked ? .failure(LoadError(kind: .cancelled, message: "cancelled")) : .empty(.cancelled)
                channel.send(LoadEvent(url: load.shown, phase: phase, duration: load.tierAsked ? load.lookup : 0), urgent: false)
            })
    }

    private func runBatch<URLs: URLChunkSequence>(chunksOf urls: URLs, _ delivery: Delivery?, _ channel: BatchChannel,
                                                  _ dispatch: HostDispatch) async {
        await runBatch(urls.makeAsyncIterator(), delivery, channel, dispatch)
    }

    /// Reads the URLs on this task (`readURLs`) while another starts the
    /// network loads in the order the host scheduler starts them: without a
    /// task each (`BatchLoads`), or, where that does not apply, each on its own.
    private func runBatch<URLs: URLChunkIterator>(_ urls: URLs, _ delivery: Delivery?, _ channel: BatchChannel,
                                                  _ dispatch: HostDispatch) async {
        let loads = BatchLoads.applies(to: options, delivery: delivery)
            ? BatchLoads(loader: self, channel: channel, dispatch: dispatch) : nil
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.runLoads(delivery, channel, dispatch, loads) }
                await readURLs(urls, delivery, channel, dispatch)
                dispatch.readerFinished()
                await group.waitForAll()
            }
        } onCancel: {
            // The queues first: nothing new starts, so each load cancelled below ends at once.
            dispatch.cancel()
            loads?.cancel()
        }
    }

    /// Starts the loads the scheduler hands out, every one ready at once
    /// (with `batchLoads`, those its loads' ends do not start themselves);
    /// returns when all have ended. A discarding group: a plain task group
    /// keeps every finished child until `next()` reaps it, so a batch's
    /// memory (and the group's bookkeeping) grew with its URLs (5,000 URLs:
    /// 112 MiB, 3.4 times the CPU).
    private func runLoads(_ delivery: Delivery?, _ channel: BatchChannel, _ dispatch: HostDispatch,
                          _ batchLoads: BatchLoads?) async {
        await withDiscardingTaskGroup { group in
            while true {
                let loads = await dispatch.nextStarts()
                if loads.isEmpty {
                    await batchLoads?.waitForAll()   // a pushed-back load may still be reporting
                    break
                }
                if let batchLoads {
                    batchLoads.start(loads)
                    continue
                }
                let now = monotonicSeconds()
                for load in loads {
                    let gate = HostAttemptGate(host: load.host, dispatch: dispatch, retries: options.fetch.retries,
                                               hostKnown: load.hostKnown, queuedAtStart: load.hostQueued)
                    // The URL's time: its lookup, its own wait for a slot (first in its host's line), its transfer.
                    let start = now - load.lookup - load.waited
                    group.addTask {
                        let loaded: Phase
                        if let remote = self.options.remote {
                            guard let answer = await self.tierLoad(load, remote, gate, dispatch, since: start) else { return }
                            loaded = answer
                        } else {
                            loaded = await self.network(url: load.url, key: load.key, entry: load.entry, gate: gate,
                                                        handedOut: load.refresh)
                        }
                        let phase = self.deliver(loaded, url: load.shown, to: load.refresh ? nil : delivery)
                        dispatch.finished(gate: gate)
                        // Not urgent: the consumer is woken once per run of events (or after the flush delay).
                        channel.send(LoadEvent(url: load.shown, phase: phase, duration: monotonicSeconds() - start,
                                               refreshed: load.refresh), urgent: false)
                    }
                }
            }
        }
    }

    /// A load of a batch with a remote tier: in the tier's lane, the tier is
    /// asked; what it does not answer is queued for its origin (nil: the load
    /// reports later, from there), where the origin's answer is uploaded.
    private func tierLoad(_ load: HostLoad, _ remote: RemoteCache, _ gate: HostAttemptGate, _ dispatch: HostDispatch,
                          since start: Double) async -> Phase? {
        guard load.host == Self.tierLane else {
            return await afterTier(remote, url: load.url, key: load.key, entry: load.entry, gate: gate,
                                   handedOut: load.refresh, uploadSlots: dispatch)
        }
        switch await askTier(remote, key: load.key) {
        case .answered(let phase):
            return phase
        case .origin(let stale):
            var last: HostKey?
            let origin = Self.hostKey(load.key, url: load.url, reusing: &last)
            // Queued before the lane's slot is given back: the batch is never seen idle in between.
            dispatch.enqueue([load.afterTier(host: origin, entry: stale, elapsed: monotonicSeconds() - start)])
            dispatch.finished(gate: gate)
            return nil
        }
    }

    /// Takes the URLs a chunk at a time (at most what the backlog has room
    /// for), looks the chunk up (`planChunk`: on two threads), then, in
    /// input order, drops duplicates, queues the cache answers and hands the
    /// network loads to their hosts' queues. Cache answers keep the input
    /// order; a network load reports when its host starts it and ends it.
    private func readURLs<URLs: URLChunkIterator>(_ urls: URLs, _ delivery: Delivery?, _ channel: BatchChannel,
                                                  _ dispatch: HostDispatch) async {
        var urls = urls
        var seen = DigestSet()
        var lastHost: HostKey?   // the last load's host: most URLs of a batch share theirs (`HostKey.of`)
        // Loads without a task each start on a transfer loop, at the end of the transfer before them:
        // their conditional requests are made ready here instead (`prepareRevalidation`).
        let prepares = BatchLoads.applies(to: options, delivery: delivery)
        // Asked once: `guard let delivery` in the loop copied the optional for every cache answer.
        let delivers = delivery != nil
        let asksTier = options.remote != nil
        do {
            while !channel.isAbandoned {
                let room = await channel.waitForRoom()
                await dispatch.waitForQueueRoom()
                let chunk = try await urls.nextChunk(limit: min(room, Defaults.batchChunkURLs))
                if chunk.isEmpty { break }
                var events: [LoadEvent] = []
                events.reserveCapacity(chunk.count)
                // The chunk's network loads, handed to their hosts at once after its cache answers.
                var loads: [HostLoad] = []
                var distinct = 0, duplicates = 0
                // Part by part, each reversed and popped: every answer is moved out, not copied.
                var parts = await planChunk(chunk, lookUp: !Task.isCancelled, seen: seen)
                for index in parts.indices {
                    var planned: [PlannedURL] = []
                    swap(&planned, &parts[index])
                    // Reversed through its buffer: each swap moves two answers (`Array.reverse`
                    // copied and destroyed each answer it swapped, ~350 instructions a URL).
                    planned.withUnsafeMutableBufferPointer { $0.reverse() }
                    while var item = planned.popLast() {
                        guard seen.insert(item.identity) else {
                            duplicates += 1
                            continue
                        }
                        distinct += 1
                        // Taken out of the item, and the plan's answer moved into its event (binding
                        // `item.plan` copied the plan, and the item's end released it again).
                        guard let plan = item.plan.take(), !Task.isCancelled else {
                            events.append(LoadEvent(url: item.shown, phase: .empty(.cancelled), duration: 0))
                            continue
                        }
                        switch consume plan {
                        case .done(let phase):
                            // A cache answer has no transient body: only `-o` needs `deliver` (its copy counts in the duration).
                            guard delivers else {
                                events.append(LoadEvent(url: item.shown, phase: phase, duration: item.duration))
                                continue
                            }
                            let copyStart = monotonicSeconds()
                            let delivered = deliver(phase, url: item.shown, to: delivery)
                            events.append(LoadEvent(url: item.shown, phase: delivered,
                                                    duration: item.duration + monotonicSeconds() - copyStart))
                        case .network(let url, let key, let entry):
                            // Nothing stored locally: the tier's lane first, when there is a tier.
                            let host = entry == nil && asksTier ? Self.tierLane : Self.hostKey(key, url: url, reusing: &lastHost)
                            loads.append(HostLoad(host: host, url: url, key: key, entry: entry,
                                                  request: prepares ? prepareRevalidation(url: url, entry: entry) : nil,
                                                  shown: item.shown, lookup: item.duration, refresh: false))
                        case .revalidateInBackground(let stale, let url, let key, let entry):
                            // Reported at once, like a cache answer; the revalidation then waits for its
                            // host like any transfer, and its outcome follows as a `refreshed` event.
                            events.append(LoadEvent(url: item.shown, phase: deliver(stale, url: item.shown, to: delivery), duration: item.duration))
                            loads.append(HostLoad(host: Self.hostKey(key, url: url, reusing: &lastHost), url: url, key: key, entry: entry,
                                                  request: prepares ? prepareRevalidation(url: url, entry: entry) : nil,
                                                  shown: item.shown, lookup: 0, refresh: true))
                        }
                    }
                }
                channel.send(contentsOf: &events, distinct: distinct, duplicates: duplicates)
                dispatch.enqueue(loads)
            }
        } catch {
            channel.send(LoadEvent(url: "", phase: .failure(LoadError(kind: .io, message: "reading the URL list: \(error)")), duration: 0), urgent: true)
        }
    }

    /// The host a URL is scheduled under (see `HostKey`): `last` itself when
    /// the URL is of its origin (`HostKey.of`); `last` becomes the answer.
    static func hostKey(_ key: CacheKey, url: String, reusing last: inout HostKey?) -> HostKey {
        guard let host = HostKey.of(normalizedURL: key.normalizedURL, reusing: last) else {
            return HostKey(origin: url, name: url)
        }
        last = host
        return host
    }
}
