import DiskCache
import Fetch
import Support

/// RemoteCache: the shared cache tier on object storage (`--remote-cache`).
///
/// It owns where an entry's object lives (WebDAV or S3 locations, signing),
/// the object's format (a header line, the record, the body, checked while it
/// streams), uploads and downloads through `Fetch`, and `pull`. It reads and
/// writes the local cache only through `DiskCache`, never decides freshness
/// (HTTPCaching does), and a failing tier never fails a URL: it is a source,
/// never the only one.
///
/// One object per entry (`RemoteObject`) on a plain HTTP object store or S3.
///
/// It never fails a URL. A read that goes wrong (unreachable, slow, 5xx,
/// 403, a corrupt or foreign object) is a miss; an upload that goes wrong is
/// dropped. Each such error (not one whose answer crossed a verdict's stop: it ends as a
/// cancelled transfer does) is counted and passed to `onError` (the command
/// line warns once and shows each with `-v`). A tier that keeps failing
/// (`TierHealth`: transport failures, or refusals of reads and uploads, in a
/// row; an S3 bucket or a path that does not exist) is left alone for the
/// rest of the run: its reads and uploads in flight are stopped, queued ones
/// dropped, and `onTurnedOff` says why. One that keeps refusing uploads only
/// (a read-only key) has its uploads stopped the same way, and goes on
/// serving reads.
///
/// Transfers run on the tier's own `FetchClient` (its own libcurl thread and
/// connections). Uploads run in the background, at most `uploadLimit` at
/// once (`RemoteDefaults.uploads`, or `--jobs` when smaller), each in a slot
/// of the run's `--jobs` when the caller names where they take them
/// (`UploadSlots`); `drain` waits for them.
public final class RemoteCache: Sendable {
    public let location: RemoteLocation
    let client: FetchClient
    /// Uploads at once, at most.
    let uploadLimit: Int
    private let onError: @Sendable (Transfer, String) -> Void
    private let onTurnedOff: @Sendable (String) -> Void
    let state = Locked(State())

    /// Everything the tier changes while it runs, behind one lock.
    struct State {
        var counters = Stats()
        var health = TierHealth()
        /// Reads and uploads in flight, stopped when the tier is turned off
        /// (uploads: when its uploads are stopped).
        var running: [ObjectIdentifier: (handle: FetchHandle, transfer: Transfer)] = [:]
        /// Whether the bucket was asked whether it exists (`afterMiss`).
        var probe = BucketProbe.notAsked
        var queue = FIFO<Upload>()
        var uploading = 0
        var drainWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// One queued upload: the entry, whether it may be shared, and where it takes its transfer slot.
    struct Upload {
        let key: String
        let url: String
        let shareable: @Sendable (CacheMetadata) -> Bool
        let slots: (any UploadSlots)?
    }

    /// What the tier did in this run.
    public struct Stats: Sendable, Equatable {
        /// Intact objects stored locally.
        public var hits = 0
        /// Objects the tier does not have (404).
        public var misses = 0
        /// Reads that failed or were refused (the origin was used).
        public var readErrors = 0
        public var uploads = 0
        public var uploadErrors = 0
        /// Whether the tier was given up for the rest of the run.
        public var disabled = false
        /// Whether uploads were stopped for the rest of the run (reads went on).
        public var uploadsStopped = false
        /// Why the tier was given up, or its uploads stopped.
        public var reason: String?
        public var errors: Int { readErrors + uploadErrors }
    }

    /// Which of the tier's transfers an error was of.
    public enum Transfer: Sendable {
        case read
        case upload
    }

    /// `uploads`: uploads at once, at most (at least 1). The command line
    /// passes `--jobs` when it is below `RemoteDefaults.uploads`: a user who
    /// asks for one transfer at a time does not get five.
    /// `onError`: each read or upload error's message. `onTurnedOff`: once, if
    /// the tier is left alone for the rest of the run, naming it and why; and
    /// once if its uploads are stopped.
    public init(location: RemoteLocation, fetch: FetchConfiguration, uploads: Int = RemoteDefaults.uploads,
                onError: @escaping @Sendable (Transfer, String) -> Void = { _, _ in },
                onTurnedOff: @escaping @Sendable (String) -> Void = { _ in }) {
        self.location = location
        uploadLimit = max(1, uploads)
        client = FetchClient(configuration: location.fetchConfiguration(from: fetch))
        self.onError = onError
        self.onTurnedOff = onTurnedOff
    }

    public var stats: Stats { state.withLock { $0.counters } }

    // MARK: - Reading

    /// The outcome of asking the tier for one key.
    public enum Read: Sendable {
        /// An intact object, now stored in the local cache.
        case stored(CacheEntry)
        /// The tier answered that it does not have it (404).
        case absent
        /// The tier could not be used: it failed, it was turned off after
        /// failures in a row, or the read was cancelled. `turnedOff`: whether
        /// the tier was turned off for the run when this read ended (before it
        /// started, while it ran, or by its own failure); false for a read
        /// that failed while the tier was still on, even if another turns it
        /// off right after.
        case unavailable(turnedOff: Bool)
    }

    /// Fetches the object of `key`, checks it while it streams, and stores it in `store`.
    /// Cancelling the task stops the read (`.unavailable`).
    public func read(_ key: CacheKey, into store: DiskCacheStore) async -> Read {
        let handle = FetchHandle()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Read, Never>) in
                startRead(key, into: store, handle: handle) { continuation.resume(returning: $0) }
            }
        } onCancel: {
            handle.cancel()
        }
    }

    /// `read` without a Swift task (a batch's tier lane): the GET starts now,
    /// and `completion` runs exactly once with the outcome, never inside this
    /// call, on one of the tier client's completion workers (`FetchClient.start`):
    /// for an object answered 2xx (a hit), the one that has streamed the object
    /// into the local cache's writer, and then checks and commits it there;
    /// for a 404 or an error, as a 2xx held in memory is, in its loop's round.
    /// A read cancelled, or one the tier was given up for, completes on a Swift task;
    /// so does a miss that waits for the bucket probe another miss asks (`afterMiss`).
    /// `handle.cancel()` stops it: `.unavailable`; so does the tier being
    /// turned off while it runs (the reads queued behind a hanging tier's
    /// first timeouts do not each wait for their own).
    public func startRead(_ key: CacheKey, into store: DiskCacheStore, handle: FetchHandle,
                          completion: @escaping @Sendable (Read) -> Void) {
        let id = handle.id
        guard begin(handle, id, .read) else { return handle.continueOnTask { completion(.unavailable(turnedOff: true)) } }
        let hex = key.hex
        let url = location.objectURL(hex)
        let sink = RemoteObjectSink(store: store, key: key, hex: hex)
        // Every object URL is valid once the location is (`RemoteLocation.checked`): not checked per key.
        client.start(FetchRequest(url: url), urlChecked: true, into: sink, handle: handle) { [self] fetched in
            let read = finishRead(fetched, sink: sink, storedURL: key.storedURL, url: url, id: id)
            guard case .absent = read else { return completion(read) }
            afterMiss(handle) { exists in completion(exists ? read : .unavailable(turnedOff: self.stats.disabled)) }
        }
    }

    /// A read's answer: the object checked and committed, or why not (counted).
    private func finishRead(_ fetched: Result<FetchResponse, FetchError>, sink: RemoteObjectSink, storedURL: String,
                            url: String, id: ObjectIdentifier) -> Read {
        do {
            _ = try fetched.get()
            let entry = try sink.finish(url: storedURL)
            succeeded(id, objectRead: true) { $0.hits += 1 }
            return .stored(entry)
        } catch let error as FetchError where error.kind == .http && error.status == 404 {
            sink.abandon()
            succeeded(id) { $0.misses += 1 }
            return .absent
        } catch let error as FetchError where error.kind == .cancelled {
            sink.abandon()
            // Stopped by the tier being turned off (`stop`), or by its caller.
            return .unavailable(turnedOff: state.withLock { s in
                s.running.removeValue(forKey: id)
                return s.counters.disabled
            })
        } catch {
            sink.abandon()
            return .unavailable(turnedOff: failed(sink.refusal ?? error, id: id, transfer: .read, what: "GET \(redactURL(url))"))
        }
    }

    /// Registers a read or upload about to start (`running`); false, without
    /// registering it, once the tier is turned off (an upload: once uploads are stopped).
    private func begin(_ handle: FetchHandle, _ id: ObjectIdentifier, _ transfer: Transfer) -> Bool {
        state.withLock { s in
            guard !s.counters.disabled, transfer == .read || !s.counters.uploadsStopped else { return false }
            s.running[id] = (handle, transfer)
            return true
        }
    }

    /// A read or upload `id` that worked (a 404 included): counted, and the failures in a row start over.
    private func succeeded(_ id: ObjectIdentifier, objectRead: Bool = false, upload: Bool = false,
                           _ count: (inout Stats) -> Void) {
        state.withLock { s in
            s.running.removeValue(forKey: id)
            count(&s.counters)
            s.health.succeeded(objectRead: objectRead, upload: upload)
        }
    }

    // MARK: - Writing

    /// Queues the entry of `key` (under `url` without password) for upload.
    /// It is looked up once, as it is when its PUT starts, and sent if it has
    /// a body and `shareable` allows its record (the loader's `TierSharing`:
    /// this module decides no HTTP rule).
    /// `slots`: where its PUT takes a transfer slot (the batch's `--jobs`); the
    /// caller never waits for it (it is queued, and runs once a slot is free).
    public func upload(key: String, url: String, from store: DiskCacheStore,
                       shareable: @escaping @Sendable (CacheMetadata) -> Bool, slots: (any UploadSlots)? = nil) {
        let start = state.withLock { s -> Bool in
            guard !s.counters.disabled, !s.counters.uploadsStopped else { return false }
            s.queue.append(Upload(key: key, url: url, shareable: shareable, slots: slots))
            guard s.uploading < uploadLimit else { return false }
            s.uploading += 1
            return true
        }
        if start { Task.detached { await self.uploadLoop(store) } }
    }

    /// Waits until every queued upload has finished (or failed).
    public func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { s -> Bool in
                if s.uploading == 0 { return true }
                s.drainWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func uploadLoop(_ store: DiskCacheStore) async {
        while let next = nextUpload() {
            guard let slots = next.slots else {
                await put(next, from: store)
                continue
            }
            // Refused (the run was cancelled): the upload is dropped, as an interrupted run's queue is;
            // so is one whose tier was given up on (or its uploads stopped) while it waited for its slot.
            _ = await slots.run {
                if state.withLock({ $0.counters.disabled || $0.counters.uploadsStopped }) { return }
                await put(next, from: store)
            }
        }
    }

    /// The next queued upload, or nil after marking this worker done (waking `drain` when it was the last).
    private func nextUpload() -> Upload? {
        let (next, waiters) = state.withLock { s -> (Upload?, [CheckedContinuation<Void, Never>]) in
            if !s.counters.disabled, !s.counters.uploadsStopped, let item = s.queue.popFirst() { return (item, []) }
            s.queue.removeAll()
            s.uploading -= 1
            guard s.uploading == 0 else { return (nil, []) }
            let waiting = s.drainWaiters
            s.drainWaiters = []
            return (nil, waiting)
        }
        for waiter in waiters { waiter.resume() }
        return next
    }

    private func put(_ upload: Upload, from store: DiskCacheStore) async {
        // The entry as it is now (a later 304 of this run may have refreshed it), looked up once:
        // whether it is shared is decided on this record. The body streams from the file (memory
        // stays flat), which must still be this entry's inode.
        guard let entry = store.lookup(upload.key, url: upload.url, accessTime: false), entry.metadata.hasBody,
              upload.shareable(entry.metadata) else { return }
        let header = RemoteObject.header(record: entry.metadata.encoded())
        let body = FetchRequest.BodyFile(path: entry.bodyPath, length: entry.metadata.bodyLength, inode: entry.inode)
        let target = location.objectURL(upload.key)
        // Started as a read is (its handle in `running`), so that turning the tier off stops it too.
        let handle = FetchHandle()
        let id = handle.id
        guard begin(handle, id, .upload) else { return }
        let request = FetchRequest(url: target, method: .put, body: header, bodyFile: body)
        let fetched = await withCheckedContinuation { (continuation: CheckedContinuation<Result<FetchResponse, FetchError>, Never>) in
            client.start(request, into: DiscardSink(), handle: handle) { continuation.resume(returning: $0) }
        }
        switch fetched {
        case .success:
            succeeded(id, upload: true) { $0.uploads += 1 }
        case .failure(let error) where error.kind == .cancelled:
            state.withLock { _ = $0.running.removeValue(forKey: id) }
        case .failure(let error):
            failed(error, id: id, transfer: .upload, what: "PUT \(redactURL(target))")
        }
    }

    /// Counts the error of read or upload `id`, passes its message on, and
    /// does what `TierHealth` says (`stop`). Returns whether the tier is
    /// turned off for the run now: it was before this error was counted, or
    /// this error turned it off.
    @discardableResult
    private func failed(_ error: Error, id: ObjectIdentifier, transfer: Transfer, what: String) -> Bool {
        let failure: TierHealth.Failure
        var text = "\(error)"
        var placeMissing: String?
        if let fetchError = error as? FetchError {
            switch fetchError.kind {
            case .dns, .connect, .timeout, .tls, .network: failure = .transport
            case .http: failure = .refusal(status: fetchError.status)
            case .redirects: failure = .refusal(status: nil)
            default: failure = .object
            }
            text = fetchError.message
            if fetchError.kind == .redirects && location.sigV4 != nil {
                text = "answered with a redirect, which a signed S3 request does not follow (its session token would go to "
                    + "the host it names); give the bucket's own endpoint (AWS_ENDPOINT_URL, AWS_REGION)"
            } else if transfer == .upload && fetchError.status == 404 {
                // A read's 404 is a miss; an upload's says the place does not exist (a misspelled bucket:
                // S3's NoSuchBucket), and that is why every read was a miss (`TierHealth`: `.noSuchPlace`).
                placeMissing = location.bucket.map { "the bucket \($0) does not exist (\(what) was answered \(text))" }
                    ?? "the server has no path \(location.display) (\(what) was answered \(text))"
            }
        } else {
            failure = .object
        }
        // The verdict is done in the lock section that reaches it: another failure counted between
        // would reach its own (a fourth upload refused) and be the one warned about.
        // A transfer no longer `running` was stopped by a verdict (its answer crossed the cancel): it
        // ends as a cancelled one does, not counted, or 16 uploads in flight when uploads stop would
        // reach the refusals that turn the whole tier off.
        let (counted, stopped, off) = state.withLock { s -> (Bool, Stopped?, Bool) in
            guard s.running.removeValue(forKey: id) != nil else { return (false, nil, s.counters.disabled) }
            if transfer == .read { s.counters.readErrors += 1 } else { s.counters.uploadErrors += 1 }
            guard !s.counters.disabled else { return (true, nil, true) }
            var verdict = s.health.failed(failure, upload: transfer == .upload, text: text)
            if verdict == .noSuchPlace, let placeMissing {
                verdict = location.bucket == nil ? .stopUploads(placeMissing) : .turnOff(placeMissing)
            }
            return (true, s.apply(verdict), s.counters.disabled)
        }
        if counted { onError(transfer, "remote cache: \(what): \(text)") }
        finish(stopped)
        return off
    }

    /// Does what a verdict says, once (`State.apply`), and warns. `id`: the
    /// transfer that failed (no longer running).
    func stop(_ verdict: TierHealth.Verdict, id: ObjectIdentifier) {
        finish(state.withLock { s in
            s.running.removeValue(forKey: id)
            return s.apply(verdict)
        })
    }

    /// What a verdict stopped: the warning, and the transfers in flight to cancel.
    struct Stopped {
        let message: String
        let handles: [FetchHandle]
    }

    private func finish(_ stopped: Stopped?) {
        guard let stopped else { return }
        onTurnedOff("remote cache \(location.display): \(stopped.message)")
        for handle in stopped.handles { handle.cancel() }
    }
}

extension RemoteCache.State {
    /// Does what a verdict says, once: turned off, the tier's reads and
    /// uploads still in flight are to be stopped (each ends `.cancelled`, not
    /// counted) and the queued uploads dropped; uploads stopped, only the
    /// uploads. The message says why.
    mutating func apply(_ verdict: TierHealth.Verdict) -> RemoteCache.Stopped? {
        switch verdict {
        case .goOn, .noSuchPlace:
            return nil
        case .turnOff(let why):
            guard !counters.disabled else { return nil }
            counters.disabled = true
            counters.reason = why
            defer { running.removeAll() }
            return RemoteCache.Stopped(message: "\(why); not used for the rest of this run", handles: running.values.map(\.handle))
        case .stopUploads(let why):
            guard !counters.disabled, !counters.uploadsStopped else { return nil }
            counters.uploadsStopped = true
            counters.reason = why
            let uploads = running.filter { $0.value.transfer == .upload }
            for key in uploads.keys { running.removeValue(forKey: key) }
            return RemoteCache.Stopped(message: "\(why); nothing more is uploaded in this run, reads go on",
                                       handles: uploads.values.map(\.handle))
        }
    }
}

/// Drops a response body (the answer to a PUT).
final class DiscardSink: BodySink, @unchecked Sendable {
    func write(_ bytes: UnsafeRawBufferPointer) throws {}
    func reset() throws {}
}
