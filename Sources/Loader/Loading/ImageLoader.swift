import DiskCache
import Fetch
import HTTPCaching
import Support

/// Joins the fetch engine and the disk cache and reports phases.
///
/// ```swift
/// let loader = ImageLoader(cache: try DiskCacheStore(directory: dir))
/// for await phase in loader.phases(for: "https://example.com/cat.png") { print(phase.name) }
/// ```
///
/// A fresh stored copy answers without the network (`success`, source
/// `cache`, straight from `empty`); otherwise the URL goes `loading` while
/// it is downloaded or revalidated.
public final class ImageLoader: Sendable {
    public let cache: DiskCacheStore
    public let options: LoaderOptions
    let client: FetchClient
    /// The loads in flight, by key hex (request coalescing). (Keyed by
    /// `String`, whose `Hashable` conformance the run has looked up already:
    /// a new key type costs every start ~370,000 instructions of run-time
    /// conformance lookup, when this dictionary's type is made.)
    private let inflight = Locked<[String: SharedLoad]>([:])
    private let refreshes = BackgroundWork()
    /// `options.jobs` and `jobsPerHost` for the loads that are not a batch's.
    let slots: LoadSlots

    public init(cache: DiskCacheStore, options: LoaderOptions = LoaderOptions()) {
        self.cache = cache
        var options = options
        // A request that asks for the server's word on every answer
        // (`Cache-Control: no-cache` in `fetch.headers`) is a `--refresh`.
        if Freshness.requestRequiresValidation(options.fetch.headers) { options.refresh = true }
        self.options = options
        client = FetchClient(configuration: options.clientConfiguration)
        slots = LoadSlots(jobs: options.jobs, jobsPerHost: options.jobsPerHost)
    }

    /// What to do for one URL, decided without any I/O beyond one metadata
    /// read and one `stat`.
    /// The network cases are boxed (`indirect`): a plan is moved several
    /// times per URL, and a cache answer (`done`, the common case of a warm
    /// run) should not carry the room of a whole stored entry.
    /// A network case's `url` is one `FetchClient.validate` accepted
    /// (`startNetwork` and `prepareRevalidation` do not check it again).
    enum Plan: Sendable {
        case done(Phase)
        indirect case network(url: String, key: CacheKey, entry: CacheEntry?)
        /// `stale-while-revalidate` (RFC 5861 §3): report `stale` (a stale
        /// `success`) at once, and revalidate `entry` in the background.
        indirect case revalidateInBackground(stale: Phase, url: String, key: CacheKey, entry: CacheEntry)
    }

    /// Validates the URL, consults the cache and decides. Synchronous and
    /// cheap: this is the whole cost of a fresh hit or an `--offline` query.
    func plan(_ url: String, now: Double = currentUnixTime()) -> Plan {
        plan(url, key: CacheKey.identify(url).key, now: now)
    }

    /// `plan` with the URL's key already computed (`CacheKey.identify`).
    func plan(_ url: String, key identified: Result<CacheKey, DiskCacheError>, now: Double = currentUnixTime()) -> Plan {
        do {
            try FetchClient.validate(url)
        } catch {
            return .done(.failure(LoadError(error)))
        }
        let key: CacheKey
        switch identified {
        case .success(let valid): key = valid
        case .failure(let error): return .done(.failure(LoadError(error)))
        }
        // The entry must name this URL; an --offline query needs no access time
        // (it is not a use), and only answers (no validator, no digest read).
        // Bound once: each `if let` of an optional entry was a copy of it (a
        // `memcpy` of its 257 bytes, three a hit).
        guard let entry = cache.lookup(key, accessTime: !options.offline, answerOnly: options.offline) else {
            return options.offline ? .done(.empty(offlineMiss(key))) : .network(url: url, key: key, entry: nil)
        }
        guard varyMatches(entry) else {
            return options.offline ? .done(.empty(offlineVaryMiss(entry))) : .network(url: url, key: key, entry: nil)
        }
        if options.offline {
            let fresh = options.freshness.isFresh(entry.metadata, now: now)
            // A remembered error is never served stale, not even offline.
            guard fresh || entry.metadata.hasBody else { return .done(.empty(.staleError(status: entry.metadata.status))) }
            var phase = hitPhase(entry, source: fresh ? .cache : .stale)
            if !fresh, case .success(var result) = phase {
                result.reason = Self.offlineReason
                phase = .success(result)
            }
            return .done(phase)
        }
        if !options.refresh {
            if options.freshness.isFresh(entry.metadata, now: now) {
                cache.markAccessed(entry)
                return .done(hitPhase(entry, source: .cache))
            }
            if options.freshness.mayServeWhileRevalidating(entry.metadata, now: now),
               case .success(var result) = hitPhase(entry, source: .stale) {
                cache.markAccessed(entry)
                result.reason = Self.staleWhileRevalidateReason
                return .revalidateInBackground(stale: .success(result), url: url, key: key, entry: entry)
            }
        }
        return .network(url: url, key: key, entry: entry)
    }

    /// Why an `--offline` query that found no intact entry for `key` is
    /// `empty`: a broken entry is named as `cache list` names it (a body cut
    /// short is stored, but answers nothing); otherwise nothing is stored.
    private func offlineMiss(_ key: CacheKey) -> EmptyReason {
        cache.brokenProblem(key).map { .broken(problem: $0) } ?? .notCached
    }

    /// Loads one URL to its terminal phase. `onLoading` runs once if the
    /// network is used, with the stored copy when there is one (see
    /// `Phase.loading`). Concurrent calls for the same URL share one transfer;
    /// cancelling one caller's task cancels only its wait, and the transfer
    /// stops when no caller is left. `delivery` also receives the body.
    ///
    /// Inside a `stale-while-revalidate` window the stale copy is returned
    /// at once and the revalidation runs in the background: `onRefreshed`
    /// gets its outcome, and `backgroundRefreshesFinished()` waits for it.
    public func load(_ url: String, deliverTo delivery: Delivery? = nil,
                     onLoading: @escaping @Sendable (LoadResult?) -> Void = { _ in },
                     onRefreshed: @escaping @Sendable (Phase) -> Void = { _ in }) async -> Phase {
        await load(url, deliverTo: delivery, onLoading: onLoading, onRefreshed: onRefreshed, refreshInForeground: false)
    }

    /// `load`; with `refreshInForeground` (`phases(for:)`), a stale copy inside
    /// its `stale-while-revalidate` window goes to `onLoading` at once and the
    /// refresh's outcome is the terminal phase (SPEC §5: "In the library,
    /// `loading` carries the stored copy while the refresh runs").
    private func load(_ url: String, deliverTo delivery: Delivery?, onLoading: @Sendable (LoadResult?) -> Void,
                      onRefreshed: @escaping @Sendable (Phase) -> Void, refreshInForeground: Bool) async -> Phase {
        switch plan(url) {
        case .done(let phase):
            return deliver(phase, url: redactURL(url), to: delivery)
        case .network(let url, let key, let entry):
            onLoading(storedCopy(entry))
            return deliver(await sharedNetwork(url: url, key: key, entry: entry), url: redactURL(url), to: delivery)
        case .revalidateInBackground(.success(let stale), let url, let key, let entry) where refreshInForeground:
            onLoading(stale)
            return deliver(await sharedNetwork(url: url, key: key, entry: entry, handedOut: true), url: redactURL(url), to: delivery)
        case .revalidateInBackground(let stale, let url, let key, let entry):
            refreshes.start { onRefreshed(await self.sharedNetwork(url: url, key: key, entry: entry, handedOut: true)) }
            return deliver(stale, url: redactURL(url), to: delivery)
        }
    }

    /// Returns once every background revalidation (`stale-while-revalidate`)
    /// started by `load` has finished.
    public func backgroundRefreshesFinished() async {
        await refreshes.finished()
    }

    /// Callers waiting on the loads in flight (tests wait for callers to join
    /// a load before they cancel them). Takes `inflight`'s lock, then each
    /// load's, the order `sharedNetwork` takes them in.
    var callersWaiting: Int { inflight.withLock { $0.values.reduce(0) { $0 + $1.waiting } } }

    /// The network load of `key`, joined with one already running for it.
    /// `handedOut`: see `network` (the load that starts the transfer decides for those that join it).
    private func sharedNetwork(url: String, key: CacheKey, entry: CacheEntry?, handedOut: Bool = false) async -> Phase {
        let hex = key.hex
        let (shared, ticket) = inflight.withLock { inflight -> (SharedLoad, UInt64) in
            if let existing = inflight[hex], let ticket = existing.join() { return (existing, ticket) }
            let created = SharedLoad({ await self.bounded(key) {
                await self.tiered(url: url, key: key, entry: entry, handedOut: handedOut, uploadSlots: self.slots)
            } },
                                     onDone: { done in
                self.inflight.withLock { if $0[hex] === done { $0.removeValue(forKey: hex) } }
            })
            inflight[hex] = created
            return (created, created.firstWaiter)
        }
        return await shared.wait(ticket)
    }

    /// `work` (one URL's network load, not a batch's) in one of `slots`.
    private func bounded(_ key: CacheKey, _ work: () async -> Phase) async -> Phase {
        guard let host = HostKey(normalizedURL: key.normalizedURL) else { return await work() }
        return await slots.run(host: host, work)
    }

    /// The phases of one URL as they happen, after the implicit initial
    /// `empty`: `loading` (only when the network is used; with the stored
    /// copy when there is one), then exactly one terminal phase — `success`,
    /// `failure`, or `empty` for an `--offline` miss. Cancelling the
    /// consuming task (or dropping the sequence) cancels the load.
    ///
    /// Inside a `stale-while-revalidate` window the stale copy comes at once,
    /// as `loading` (source `stale`, reason `stale-while-revalidate`), and
    /// the refresh's outcome ends the sequence (`revalidated`, `network`, or
    /// a failure), so a UI shows the copy and then learns what replaced it.
    public func phases(for url: String, deliverTo delivery: Delivery? = nil) -> AsyncStream<Phase> {
        AsyncStream { continuation in
            let task = Task {
                let phase = await self.load(url, deliverTo: delivery, onLoading: { continuation.yield(.loading($0)) },
                                            onRefreshed: { _ in }, refreshInForeground: true)
                continuation.yield(phase)
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: - Helpers

    /// What `stale-while-revalidate` puts in `LoadResult.reason` (JSON `reason`).
    public static let staleWhileRevalidateReason = "stale-while-revalidate"
    /// `reason` of a stale copy served because the network failed (`--stale-if-error`).
    public static let staleIfErrorReason = "stale-if-error"
    /// `reason` of a stale copy reported by `--offline` (no network was asked for).
    public static let offlineReason = "offline"

    /// The stored copy a `loading` phase carries: an entry with a body, as a stale result.
    func storedCopy(_ entry: CacheEntry?) -> LoadResult? {
        guard let entry, entry.metadata.hasBody, case .success(let result) = hitPhase(entry, source: .stale) else { return nil }
        return result
    }

    func hitPhase(_ entry: CacheEntry, source: Source) -> Phase {
        let meta = entry.metadata
        if !meta.hasBody {
            return .failure(LoadError(kind: .http, message: "HTTP \(meta.status) \(HTTPStatus.reason(meta.status))",
                                      status: meta.status, source: .cache))
        }
        return .success(LoadResult(
            stored: .entry(directory: entry.directory, key: entry.keyDigest), source: source, bytes: meta.bodyLength, status: meta.status,
            contentType: meta.header(.contentType), formatName: meta.format, width: meta.width, height: meta.height))
    }
}
