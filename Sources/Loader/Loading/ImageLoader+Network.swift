import DiskCache
import Fetch
import HTTPCaching
import ImageDecoding
import ImageFormats
import Support
#if canImport(Glibc)
import Glibc
#endif

extension ImageLoader {
    /// Downloads or revalidates one URL and stores the result (RFC 9111 §3,
    /// §4.3). `entry` is the stored entry the plan found (Vary-matched), if any.
    /// `gate` takes the retry decisions that concern the host (a batch's).
    /// `handedOut`: `entry` was reported already, as the stale copy of a
    /// `stale-while-revalidate` window (`plan`'s `.revalidateInBackground`).
    func network(url: String, key: CacheKey, entry: CacheEntry?, gate: (any FetchAttemptGate)? = nil,
                 handedOut: Bool = false) async -> Phase {
        let (exchange, made) = NetworkExchange.make(self, url: url, key: key, entry: entry, gate: gate, handedOut: handedOut)
        defer { exchange.abandon() }
        let fetched: Result<FetchResponse, FetchError>
        do {
            fetched = .success(try await client.fetch(made.request, into: exchange))
        } catch let error as FetchError {
            fetched = .failure(error)
        } catch {
            return .failure(LoadError(kind: .network, message: "\(error)"))
        }
        switch complete(exchange, with: fetched) {
        case .done(let phase): return phase
        case .again(let entry): return await network(url: url, key: key, entry: entry, gate: gate, handedOut: handedOut)
        }
    }

    /// `network` without a Swift task (the batch's way, issue 22): the
    /// transfer starts now, and `completion` runs once with the phase. For a
    /// first attempt answered 2xx or 304 it runs on the client's completion
    /// worker that takes the transfer from its loop, which then also
    /// validates, commits and builds the result (`complete`); anything rarer
    /// goes on on a Swift task (`FetchClient.start`), a load asked again
    /// (`NetworkEnd.again`) through `network` itself. Not for `--decode`
    /// (decoded on the cooperative pool) nor the remote tier.
    /// `prepared`: the request `prepareRevalidation` made of `entry`, if any.
    /// `giveSlotBack`: for a first attempt's 304 that updates `entry` in
    /// place (the common revalidation), called on the transfer loop, which
    /// then hands the update and `completion` to a completion worker
    /// (`FetchHandle.handOff`): the loop's thread, where a busy host's
    /// transfers all run (SPEC §6), starts the next loads and does no file
    /// work (issue 22). Called at most once, before `completion`; its
    /// `Bool` says whether it was.
    func startNetwork(url: String, key: CacheKey, entry: CacheEntry?, prepared: PreparedRequest? = nil,
                      gate: (any FetchAttemptGate)?, handedOut: Bool = false, handle: FetchHandle,
                      giveSlotBack: (@Sendable () -> Void)? = nil,
                      completion: @escaping @Sendable (Phase, _ slotGivenBack: Bool) -> Void) {
        let (exchange, made) = NetworkExchange.make(self, url: url, key: key, entry: entry, prepared: prepared, gate: gate,
                                                    handedOut: handedOut)
        let end: @Sendable (Result<FetchResponse, FetchError>) -> Void = { [self] fetched in
            guard let giveSlotBack, case .success(let response) = fetched, exchange.updatesInPlace(response) else {
                return finish(exchange, fetched, url: url, gate: gate, handle: handle, slotGivenBack: false, completion)
            }
            giveSlotBack()
            handle.handOff {
                self.finish(exchange, fetched, url: url, gate: gate, handle: handle, slotGivenBack: true, completion)
            }
        }
        switch consume made {
        case .prepared(let prepared): client.start(prepared, into: exchange, handle: handle, completion: end)
        // `url` is a plan's `.network` (or `.revalidateInBackground`): `plan` validated it.
        case .plain(let request): client.start(request, urlChecked: true, into: exchange, handle: handle, completion: end)
        }
    }

    /// `startNetwork`'s end of a fetch: `complete`, then `completion`, or the load asked again on a task.
    /// `slotGivenBack`: also says that the answer is a 304 found to update the entry in place (`updatesInPlace`).
    private func finish(_ exchange: NetworkExchange, _ fetched: Result<FetchResponse, FetchError>, url: String,
                        gate: (any FetchAttemptGate)?, handle: FetchHandle, slotGivenBack: Bool,
                        _ completion: @escaping @Sendable (Phase, _ slotGivenBack: Bool) -> Void) {
        let end = complete(exchange, with: fetched, updatesInPlace: slotGivenBack)
        exchange.abandon()
        switch consume end {   // the phase is moved out: it was copied, and the end destroyed, per URL
        case .done(let phase):
            completion(phase, slotGivenBack)
        case .again(let entry):
            handle.continueOnTask {
                completion(await self.network(url: url, key: exchange.key, entry: entry, gate: gate,
                                              handedOut: exchange.handedOut), slotGivenBack)
            }
        }
    }

    /// The conditional request `startNetwork` would make of `entry`, made
    /// ready now (`FetchClient.prepare`): a batch does this as it reads its
    /// list, so the transfer loop that starts the load does not. nil without an entry.
    /// `url` is a plan's (validated: see `Plan`).
    func prepareRevalidation(url: String, entry: CacheEntry?) -> PreparedRequest? {
        guard let entry else { return nil }
        return client.prepare(Self.request(url: url, conditionalOn: Self.conditional(entry), gate: nil), urlChecked: true)
    }

    /// The stored record a request for `entry` is conditional on: an entry with a body.
    static func conditional(_ entry: CacheEntry?) -> CacheMetadata? {
        entry.map(\.metadata).flatMap { $0.hasBody ? $0 : nil }
    }

    /// A GET of `url`, conditional on `conditional` (its validators, §4.3.1).
    static func request(url: String, conditionalOn conditional: CacheMetadata?, gate: (any FetchAttemptGate)?) -> FetchRequest {
        // The conditional fields have distinct names: taken as they are, no `set` (a look-up and a growth each).
        FetchRequest(url: url, headers: conditional.map(Revalidation.conditionalHeaders) ?? HTTPHeaders(), gate: gate)
    }

    /// One network load, as `network` and `startNetwork` make it (`make`, with its request:
    /// conditional on the stored entry, or resuming a kept partial body).
    /// A class: `startNetwork`'s closures hold it, on the transfer loop, and a
    /// copy of a struct holding the stored entry (about 250 bytes) copied each
    /// field (three per revalidation, about 1.5 k instructions with their releases).
    /// It is its own body sink (a `CacheSink`, whose `key` it has): one object per
    /// load, where an exchange holding its sink was two (an allocation and a free per cold URL).
    /// Its own fields are constants; the sink's threading is `CacheSink`'s.
    final class NetworkExchange: CacheSink, @unchecked Sendable {
        /// The request, made ready ahead (`prepareRevalidation`) or made here. Handed to the
        /// caller beside the exchange, not kept in it: read back out of the exchange, it was
        /// copied and destroyed whole (~0.7 k instructions per URL).
        enum Made: Sendable {
            case prepared(PreparedRequest)
            case plain(FetchRequest)

            var request: FetchRequest {
                switch self {
                case .prepared(let prepared): prepared.request
                case .plain(let request): request
                }
            }
        }
        /// The stored entry, boxed: most loads (cold URLs) have none, and a `CacheEntry?` held
        /// inline is copied and destroyed, even nil, through its value witnesses.
        private let stored: Stored?
        private final class Stored: Sendable {
            let entry: CacheEntry
            init(_ entry: CacheEntry) { self.entry = entry }
        }
        var entry: CacheEntry? { stored?.entry }
        /// Whether there is an `entry`, read without copying it.
        var hasEntry: Bool { stored != nil }
        /// The stored record the request is conditional on (an entry with a body): `entry`'s, not a second copy.
        var conditional: CacheMetadata? {
            guard let stored, stored.entry.metadata.hasBody else { return nil }
            return stored.entry.metadata
        }

        /// Whether `response` is a 304 that `complete` merges into the stored
        /// entry, in place (its end is `.done`, never `.again`).
        func updatesInPlace(_ response: FetchResponse) -> Bool {
            // `entry`'s record without `conditional`'s map and flatMap (copies, on the loop, per 304).
            guard response.status == 304, let stored, stored.entry.metadata.hasBody else { return false }
            return Revalidation.validatorMatches(response, stored.entry.metadata)
        }
        /// A kept partial body of the URL was found (continued when it has a validator).
        let foundPartial: Bool
        let requestTime: Double
        /// `entry` was reported already as a stale copy (see `network`'s `handedOut`).
        let handedOut: Bool

        /// A load's exchange and its request.
        /// `prepared`: `entry`'s request made ready ahead (`prepareRevalidation`), if it was.
        static func make(_ loader: ImageLoader, url: String, key: CacheKey, entry: CacheEntry?, prepared: PreparedRequest? = nil,
                         gate: (any FetchAttemptGate)?, handedOut: Bool = false) -> (NetworkExchange, Made) {
            // Resume (SPEC §5): a body cut off earlier continues where it stopped, if it is still the same one.
            // (Its validator must be sendable: a damaged one means starting over, not failing.)
            // No `key.hex` made here: a cold URL needs none (the writer names its entry from the digest).
            var partial = entry == nil ? loader.cache.partial(for: key).flatMap { partial in
                partial.validator.map { HTTPHeaders.problem(name: "If-Range", value: $0) == nil } ?? true ? partial : nil
            } : nil
            if let kept = partial, !CacheSink.mayResume(kept.metadata) {
                // A part an older version kept that cannot be continued (of a coded body, or
                // with only a weak Last-Modified): the whole body is asked for.
                loader.cache.removePartial(key.hex)
                partial = nil
            }
            let made: Made
            if var prepared, entry != nil {
                prepared.gate = gate
                made = .prepared(prepared)
            } else {
                var request = entry == nil ? FetchRequest(url: url, headers: HTTPHeaders(), gate: gate)
                    : ImageLoader.request(url: url, conditionalOn: ImageLoader.conditional(entry), gate: gate)
                if let partial, let validator = partial.validator {
                    request.headers.set(name: "Range", value: "bytes=\(partial.length)-")
                    request.headers.set(name: "If-Range", value: validator)
                }
                made = .plain(request)
            }
            let exchange = NetworkExchange(loader, key: key, partial: partial, entry: entry, handedOut: handedOut)
            return (exchange, made)
        }

        private init(_ loader: ImageLoader, key: CacheKey, partial: PartialBody?, entry: CacheEntry?,
                     handedOut: Bool) {
            if let entry { stored = Stored(entry) } else { stored = nil }
            foundPartial = partial != nil
            self.handedOut = handedOut
            requestTime = currentUnixTime()
            super.init(cache: loader.cache, key: key, partial: partial?.validator == nil ? nil : partial,
                       checkStructure: !loader.options.acceptAnyContent, spools: loader.options.keepsUnstoredBodies,
                       limit: loader.options.fetch.maxSize > 0 ? loader.options.fetch.maxSize : .max)
        }
    }

    /// How a network load ends: its phase, or a new load of the URL (asked
    /// again, conditional on `entry`, or not when it is nil).
    enum NetworkEnd {
        case done(Phase)
        case again(entry: CacheEntry?)
    }

    /// Turns a fetch's outcome into the load's end, synchronously: a kept
    /// partial body, a remembered error, the 304 merge, the 206 check, the
    /// structure verdict and the commit. Runs wherever the fetch completed.
    /// `updatesInPlace`: the caller found the answer to be a 304 that updates
    /// the entry in place (`NetworkExchange.updatesInPlace`), so it is not compared again.
    func complete(_ exchange: NetworkExchange, with fetched: Result<FetchResponse, FetchError>,
                  updatesInPlace: Bool = false) -> NetworkEnd {
        // `exchange.entry` is read where it is needed (rarely): see `hasEntry`.
        let key = exchange.key, sink: CacheSink = exchange, requestTime = exchange.requestTime
        let response: FetchResponse
        switch fetched {
        case .success(let answered):
            response = answered
        case .failure(let error):
            if let overLimit = sink.overLimit {
                return .done(.failure(LoadError(kind: .tooLarge, message: "response too large: " + overLimit, attempts: error.attempts)))
            }
            if let refusal = sink.refusal { return .done(.failure(LoadError(refusal, attempts: error.attempts))) }
            var keptPart: Int64?
            // Cut off by the network, a timeout, or the user (Ctrl-C, a cancelled task): the part is
            // kept alike, so that the next run asks only for the rest (docs/http.md "Resume"). Not
            // of a response that may not be stored (`no-store`: no part of it, RFC 9111 §5.2.2.5).
            if error.kind == .network || error.kind == .timeout || error.kind == .cancelled,
               Storability.mayStore(status: 200, CacheControl(sink.headers)) {
                let record = Storability.partialRecord(url: key.storedURL, headers: sink.headers, requestTime: requestTime,
                                                       responseTime: currentUnixTime())
                keptPart = sink.keepPartial(record, minimum: CacheDefaults.resumeMinimum)
            }
            if error.status == 416 || sink.partialRefused, exchange.foundPartial {
                // The kept part no longer fits the resource (it shrank), or the server's 206 does not
                // continue it (it answers a Range from elsewhere): drop it and ask for the whole body.
                cache.removePartial(key.hex)
                return .again(entry: exchange.entry)
            }
            let phase = failed(error, key: key, entry: exchange.entry, requestTime: requestTime, handedOut: exchange.handedOut)
            guard let kept = keptPart, case .failure(let failure) = phase else { return .done(phase) }
            // Said, so that the user knows a rerun will not start from nothing (docs/http.md "Resume").
            return .done(.failure(LoadError(kind: failure.kind, message: failure.message
                                            + "; \(HumanUnits.bytes(kept)) kept: the next run asks only for the rest",
                                            status: failure.status, attempts: failure.attempts, source: failure.source,
                                            effectiveURL: failure.effectiveURL)))
        }
        let responseTime = currentUnixTime()
        if response.status == 304 {
            guard let entry = exchange.entry, exchange.conditional != nil else {
                return .done(.failure(LoadError(kind: .http, message: "HTTP 304 Not Modified to an unconditional request",
                                                status: 304, attempts: response.attempts)))
            }
            guard updatesInPlace || exchange.updatesInPlace(response) else {
                // §4.3.4: the 304 names another representation; ours cannot be updated. Ask again, unconditionally.
                return .again(entry: nil)
            }
            return .done(revalidated(entry, response: response, requestTime: requestTime, responseTime: responseTime))
        }
        if response.status == 206 && !sink.resumed {
            return .done(.failure(LoadError(kind: .http, message: "HTTP 206 Partial Content to a request for the whole body",
                                            status: 206, attempts: response.attempts)))
        }
        let body: ReceivedBody
        do { body = try sink.received() } catch {
            return .done(.failure(LoadError(error, attempts: response.attempts)))
        }
        return .done(stored(body, inspection: sink.inspection(head: body.head), key: key, replacesEntry: exchange.hasEntry, response: response,
                            requestTime: requestTime, responseTime: responseTime, sink: sink))
    }

    /// A 304: the stored record merged with it (`Revalidation.merged`), the body kept.
    private func revalidated(_ entry: CacheEntry, response: FetchResponse, requestTime: Double, responseTime: Double) -> Phase {
        // A 304 that may not be stored (`no-store`, RFC 9111 §3): nothing of it is kept, so its headers are
        // not merged and the entry stays as it was, stale: the next run asks again. Merged, a `no-store`
        // without `max-age` left the body to --default-ttl: fresh for 7 days, no request.
        guard Storability.mayStore(status: response.status, CacheControl(response.headers)) else {
            return .success(result(entry, source: .revalidated, response: response))
        }
        let meta = Revalidation.merged(entry.metadata, with: response.headers, varyRequest: varyRequest,
                                       requestTime: requestTime, responseTime: responseTime)
        do {
            let updated = try cache.updateMetadata(of: entry, to: meta)
            return .success(result(updated, source: .revalidated, response: response))
        } catch where error.kind == .io {
            // A read-only cache: the stored body is still the right one; only its metadata stays old.
            var kept = result(entry, source: .revalidated, response: response)
            kept.warning = "the cache could not be updated: \(error.message)"
            return .success(kept)
        } catch {
            return .failure(LoadError(error, attempts: response.attempts))
        }
    }

    /// A 2xx with a body: validate it as an image, then store it (or, for
    /// `no-store`, keep it only until it is delivered).
    /// `replacesEntry`: the load had a stored entry (the plan's).
    /// `inspection`: the structure check's, nil when it is not checked (`--any`).
    /// `sink`: where `writer` came from, which takes the body back out of the
    /// cache when publishing it fails (`CacheSink.spill(refusedCommit:)`).
    private func stored(_ writer: ReceivedBody, inspection: ImageInspection?, key: CacheKey, replacesEntry: Bool,
                        response: FetchResponse, requestTime: Double, responseTime: Double, sink: CacheSink) -> Phase {
        let info: ImageInfo?
        // Whether the structure was checked, from this one match: `inspection == nil` copied the
        // optional inspection out through its value witness (four times, ~0.45 k a download).
        let checked: Bool
        switch inspection {
        case nil:
            checked = false
            info = ImageInfo.sniff(writer.head)   // any content may be stored (--any): the format only labels it
        case .notAnImage, .empty:
            // The server's label is quoted as the claim the bytes refute, never as proof.
            let label = ContentTypeLabel.of(response.headers["Content-Type"]).map { "; the server labelled it \($0)" } ?? ""
            return .failure(LoadError(kind: .notAnImage, message: "not an image: \(inspection?.problem ?? "")\(label)",
                                      status: response.status,
                                      attempts: response.attempts, effectiveURL: response.failedAt))
        case .broken(_, let problem):
            return .failure(LoadError(kind: .notAnImage, message: problem, status: response.status,
                                      attempts: response.attempts, effectiveURL: response.failedAt))
        case .image(let image, _):
            checked = true
            info = image
        }
        var check: ImageCheck? = checked ? .structure : nil
        if options.decode, let format = info?.format, checked {
            // SPEC §5 (--decode): every pixel decoded before the body is published, so a
            // refused body never reaches the cache. This runs on the cooperative pool (the
            // task that awaited the transfer), never on a fetch engine's thread: a batch
            // with --decode loads through `network`, not `startNetwork`.
            let verdict = ImageDecoding.decode(path: writer.readablePath, format: format)
            if let refusal = verdict.refusal {
                return .failure(LoadError(kind: .notAnImage, message: refusal, status: response.status,
                                          attempts: response.attempts, effectiveURL: response.failedAt))
            }
            if verdict == .decoded { check = .decoded }
        }
        if !Storability.mayStore(status: response.status, CacheControl(response.headers)) {
            // Never stored (§5.2.2.5); an older entry is dropped, since the server no longer allows keeping it.
            // One that cannot be removed would still be served (fresh, or --offline): a warning says so.
            var kept: String?
            if replacesEntry {
                do { try cache.remove(key.hex) } catch {
                    kept = "the older stored copy could not be removed (the server now says no-store): \(error.message); later runs may still serve it"
                }
            }
            return unstored(writer, info: info, check: check, response: response, storeFailure: nil, warning: kept)
        }
        guard let writer = writer as? CacheWriter else {
            // The cache could not be written: the body is only delivered (-o, --output-dir), with a warning.
            return unstored(writer, info: info, check: check, response: response,
                            storeFailure: (writer as? SpoolFile)?.storeFailure)
        }
        let storedURL = key.storedURL   // once: a scan of the URL for a password, and a string retained (~170 instructions)
        let meta = Storability.record(url: storedURL, status: response.status, headers: response.headers,
                                      varyRequest: varyRequest.values(for: response.headers, url: storedURL),
                                      requestTime: requestTime, responseTime: responseTime,
                                      format: info?.format.name, width: info?.width, height: info?.height)
        do {
            // Moved in: no copy of the record. Its URL is the key's `storedURL`: not normalised again.
            let entry = try writer.commit(consume meta, keepingBodyOnFailure: true, urlIsStored: true)
            // The check goes in with the rest: set afterwards, it made a second box (a copy of every field).
            var loaded = result(entry, source: .network, response: response, checked: check)
            if let kept = sink.resumedFrom { loaded.resumedFrom = kept }   // rare: the second box is no cost
            return .success(loaded)
        } catch {
            // Refused at the last step (a disk that filled up as the record or the name went in):
            // delivered all the same, with the cache's reason as the warning, as a full cache is.
            do {
                let spool = try sink.spill(refusedCommit: writer, error)
                return unstored(spool, info: info, check: check, response: response, storeFailure: spool.storeFailure)
            } catch {
                return .failure(LoadError(error, attempts: response.attempts))
            }
        }
    }

    /// A body that is not in the cache (`no-store`, or the cache could not
    /// be written: `storeFailure`), kept only until it is delivered.
    /// `warning`: what else the user should know (an older entry that could not be removed).
    private func unstored(_ body: ReceivedBody, info: ImageInfo?, check: ImageCheck?, response: FetchResponse,
                          storeFailure: String?, warning: String? = nil) -> Phase {
        let transient: TransientBody
        do { transient = TransientBody(path: try body.keepUnstored()) } catch {
            let what = storeFailure.map { "\($0); and cannot keep the body" } ?? "cannot keep the no-store body"
            return .failure(LoadError(kind: .io, message: "\(what): \(error.message)", attempts: response.attempts))
        }
        var loaded = LoadResult(
            path: nil, source: .network, bytes: body.bytesWritten, status: response.wholeStatus,
            contentType: response.headers["Content-Type"], format: info?.format, width: info?.width,
            height: info?.height, attempts: response.attempts, httpVersion: response.httpVersion,
            redirects: response.redirects, effectiveURL: response.effectiveURL, warning: warning, transientBody: transient,
            checked: check)
        loaded.storeFailure = storeFailure
        return .success(loaded)
    }

    /// A URL of a host the batch gave up on, failed without trying it: like
    /// its host's last failure (`--stale-if-error` may serve a stored copy).
    func hostGaveUp(_ failure: HostFailure, url: String, key: CacheKey, entry: CacheEntry?) -> Phase {
        let error = FetchError(failure.errorKind, url: url, detail: failure.message, attempts: 0)
        return failed(error, key: key, entry: entry, requestTime: currentUnixTime(), handedOut: false)   // never an error status
    }

    /// An error status or a transfer failure: remember an error status that
    /// is fresh by its own headers (RFC 9111 §3: explicit freshness, or the
    /// heuristic for 404, 405, 410, 414, 501); serve a stale copy if
    /// `--stale-if-error` allows.
    /// `handedOut`: `entry` is the stale copy a `stale-while-revalidate`
    /// window reported already, with its path: an error status is then not
    /// remembered over it (it stays, as the refresh line says). Known from
    /// the plan, not judged again here: the refresh may start after the
    /// window has closed (a batch's waits for a slot).
    private func failed(_ error: FetchError, key: CacheKey, entry: CacheEntry?, requestTime: Double, handedOut: Bool) -> Phase {
        let requestWindow = Freshness.requestStaleWindow(options.fetch.headers)
        if options.staleIfError, Freshness.staleMayAnswer(error), let entry, entry.metadata.hasBody,
           options.freshness.mayServeStale(entry.metadata, now: currentUnixTime(), requestWindow: requestWindow),
           case .success(var result) = hitPhase(entry, source: .stale) {
            // The stored copy stays: the error is not remembered over it.
            result.warning = "\(error.message); served a stale stored copy (--stale-if-error)"
            result.attempts = error.attempts
            result.reason = Self.staleIfErrorReason
            return .success(result)
        }
        if error.kind == .http, let status = error.status, let headers = error.headers, !handedOut {
            remember(status: status, headers: headers, key: key, requestTime: requestTime)
        }
        return .failure(LoadError(error, addendum: staleRefusal(error, entry: entry, requestWindow: requestWindow)))
    }

    /// Why `--stale-if-error` did not serve the stored copy it had, as the
    /// failure's message goes on ("; the stored copy was not served: …"),
    /// or nil (no such option, no failure it answers, no stored body).
    /// A user who asked for stale copies would otherwise take the failure for
    /// an empty cache.
    private func staleRefusal(_ error: FetchError, entry: CacheEntry?, requestWindow: Int?) -> String? {
        guard options.staleIfError, Freshness.staleMayAnswer(error), let entry, entry.metadata.hasBody else { return nil }
        let why = options.freshness.staleRefusal(entry.metadata, now: currentUnixTime(), requestWindow: requestWindow)
            ?? "it failed its check"   // refused by `hitPhase`: a body that no longer matches its record
        return "; the stored copy was not served (--stale-if-error): " + why
    }

    /// Stores a final error status without its body when the rules allow
    /// (`Storability.errorRecord`); otherwise nothing is stored (an older
    /// entry stays until a response replaces it).
    private func remember(status: Int, headers: HTTPHeaders, key: CacheKey, requestTime: Double) {
        let now = currentUnixTime(), storedURL = key.storedURL
        guard let meta = Storability.errorRecord(
            url: storedURL, status: status, headers: headers,
            varyRequest: varyRequest.values(for: headers, url: storedURL),
            requestTime: requestTime, responseTime: now, freshness: options.freshness, now: now) else { return }
        bestEffort("the status is not remembered, and the next run asks again; this failure is reported either way") {
            try cache.storeWithoutBody(meta, key: key.hex)
        }
    }

    private func result(_ entry: CacheEntry, source: Source, response: FetchResponse, checked: ImageCheck? = nil) -> LoadResult {
        // The record's fields read in place (a `let` of `entry.metadata` copied it whole: a retain per string).
        LoadResult(
            stored: .entry(directory: entry.directory, key: entry.keyDigest), source: source, bytes: entry.metadata.bodyLength,
            status: response.wholeStatus, contentType: entry.metadata.header(.contentType),
            formatName: entry.metadata.format, width: entry.metadata.width, height: entry.metadata.height,
            attempts: response.attempts, httpVersion: response.httpVersion, redirects: response.redirects,
            effectiveURL: response.effectiveURL, checked: checked)
    }
}

extension DiskCacheError {
    /// A failed system call on `path`, with `strerror(errno)`.
    static func io(_ operation: String, path: String) -> DiskCacheError {
        let code = Glibc.errno
        return DiskCacheError(.io, path: path, message: "\(operation) \(path): \(String(cString: strerror(code)))", errno: code)
    }
}

extension FetchResponse {
    /// The status a result reports: a resumed body's `206` completed the
    /// whole image the user asked for, stored as a `200` (RFC 9110 §15.3.7,
    /// docs/http.md "Resume"), so it is reported as the `200` it is stored as.
    var wholeStatus: Int { status == 206 ? 200 : status }

    /// Where a body that was refused came from, when redirects led there (`LoadError.effectiveURL`).
    var failedAt: String? { redirects > 0 ? effectiveURL : nil }
}
