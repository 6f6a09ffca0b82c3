import Support

/// Runs HTTP transfers on libcurl transfer loops (threads with a multi
/// handle each, one per core by default: `TransferLoops`), each awaited
/// from a Swift task (`fetch`: cancelling the task aborts its transfer) or
/// completed by a callback on a completion worker (`start`, with a
/// `FetchHandle`: `CompletionWorkers`, threads beside the loops).
///
/// ```swift
/// let client = FetchClient()
/// let sink = try FileSink(path: "/tmp/cat.png")
/// do {
///     let response = try await client.fetch(FetchRequest(url: "https://example.com/cat.png"), into: sink)
///     try sink.close()
/// } catch {
///     sink.remove()   // the sink's file is the caller's: a failed or cancelled fetch leaves what it wrote
/// }
/// ```
///
/// Every error thrown is a `FetchError`.
public final class FetchClient: Sendable {
    public let configuration: FetchConfiguration
    /// The transfer threads, each started on first use, and the completion
    /// workers beside them (`loops.workers`).
    private let loops: TransferLoops
    /// The header lines of a GET with no headers of its own (most requests),
    /// made once: every transfer shares this array, and an easy handle that
    /// holds it keeps its libcurl header list (`CurlEasy`).
    private let plainGetLines: [String]
    /// Why the configuration's headers cannot be sent (`FetchConfiguration.validate`):
    /// then every request fails with it, before any I/O.
    private let configurationProblem: (name: String, problem: HeaderProblem)?

    public init(configuration given: FetchConfiguration = FetchConfiguration()) {
        var configuration = given
        // libcurl reads -1 as "unlimited" (SPEC §5: at most 10): below 0 is 0.
        configuration.maxRedirects = max(0, configuration.maxRedirects)
        configuration.environmentNamesProxy = ProxyEnvironment.namesProxy()
        self.configuration = configuration
        loops = TransferLoops(configuration: configuration)
        plainGetLines = Self.headerLines(for: FetchRequest(url: ""), configuration)
        configurationProblem = configuration.headerProblem
    }

    deinit { loops.shutdown() }

    /// libcurl's version, e.g. "7.88.1".
    public static var curlVersion: String { CurlGlobal.version }

    /// Fetches `request`, streaming a 2xx body into `sink`, retrying as the
    /// configuration allows. Returns for 2xx and 304; throws `FetchError`
    /// for everything else, `.cancelled` when the task is cancelled.
    public func fetch(_ request: FetchRequest, into sink: BodySink) async throws -> FetchResponse {
        let attempts = try attempts(for: request, urlChecked: false, into: sink)
        return try await drive(attempts, from: attempts.start(), gate: request.gate, sink)
    }

    /// `request` checked and turned into its header lines now, on this
    /// thread, for `start` to run later without doing so (a batch prepares
    /// its revalidations as it reads its list, off the transfer loops that
    /// start them). A URL that cannot be fetched fails at `start`, as it would
    /// unprepared, and so does a header that cannot be sent (`HTTPHeaders.problem`,
    /// the configuration's or the request's: kind `.invalidURL`, no attempt made).
    /// `urlChecked`: the caller has had `validate` accept this very URL
    /// already (a batch's plan does, for every URL it loads): not checked twice.
    public func prepare(_ request: FetchRequest, urlChecked: Bool = false) -> PreparedRequest {
        PreparedRequest(request: request, lines: lines(of: request, urlChecked: urlChecked), origin: TransferOrigin(url: request.url))
    }

    /// `request`'s header lines, or why it cannot be fetched (`prepare`).
    private func lines(of request: FetchRequest, urlChecked: Bool) -> Result<[String], FetchError> {
        do throws(FetchError) {
            if !urlChecked { try Self.validate(request.url) }
            if let (name, problem) = configurationProblem ?? request.headers.firstProblem() {
                throw FetchError(header: name, problem, url: request.url)
            }
            return .success(request.method == .get && request.headers.isEmpty
                ? plainGetLines : Self.headerLines(for: request, configuration))
        } catch {
            return .failure(error)
        }
    }

    /// Starts `request` without a Swift task, and calls `completion` exactly
    /// once, never from inside this call (it may run on another thread while
    /// this call is still returning). When the first attempt answers 2xx
    /// (the common case), the loop hands the rest to one of the client's
    /// completion workers and goes back to its transfers: there the body
    /// held in memory is handed to `sink` and `completion` runs, not on the
    /// loop's thread (only if no worker thread could be started at all). The
    /// loop hands over the transfers one round of it finished in one batch
    /// (`CurlLoop.handOff`): one wake-up per round, not per transfer.
    /// A first attempt's 304 has no body, and its `completion` runs on the
    /// loop's thread: handing all of it to a worker cost more CPU than the
    /// work, per transfer and in a round's batch alike, mostly for the next
    /// fetches it starts (issue 22; bench/history/revalidate.md "Session 9: batch hand-off").
    /// Such a completion may start those there and hand the rest of its work
    /// to the round's batch with `handle.handOff` (bench/history/revalidate.md "Session 11: revalidate").
    /// `completion` may do file work and start other
    /// fetches, but should not wait long: the worker's later
    /// jobs wait behind it (`CompletionWorkers`). A fetch without a gate that
    /// fails for good on its loop (a 404, a refused connection: no retry
    /// left) completes as a 2xx answer does, in the loop's round on a worker.
    /// Any other course (a retry, a resumed redirect chain, the gate's decision
    /// after a failure) goes on on a Swift task exactly as `fetch` does, and
    /// `completion` runs there.
    /// `handle.cancel()` stops it at any point, before it starts included:
    /// it then fails `.cancelled`; once the transfer is done (its completion
    /// queued on a worker), the cancel is too late and the completion runs
    /// with the answer.
    ///
    /// Memory: a finished transfer waiting for its worker holds its body if
    /// it was held in memory (at most `Defaults.bufferedBodyLimit`). The
    /// engine does not bound how many wait: the caller does, by the fetches
    /// it lets run until their completions have run. A batch gives a load's
    /// slot back in its completion, so at most `--jobs` bodies wait.
    /// `urlChecked`: as `prepare`'s. Made ready here, on this thread: no `PreparedRequest`
    /// (its box, made and freed per cold URL of a batch, ~0.5 k instructions).
    public func start(_ request: FetchRequest, urlChecked: Bool = false, into sink: BodySink, handle: FetchHandle,
                      completion: @escaping @Sendable (Result<FetchResponse, FetchError>) -> Void) {
        start(into: sink, handle: handle, completion: completion) { () throws(FetchError) in
            try attempts(for: request, urlChecked: urlChecked, into: sink, streamsOnWorker: true)
        }
    }

    /// `start` of a request `prepare` made ready (by this client).
    public func start(_ prepared: PreparedRequest, into sink: BodySink, handle: FetchHandle,
                      completion: @escaping @Sendable (Result<FetchResponse, FetchError>) -> Void) {
        start(into: sink, handle: handle, completion: completion) { () throws(FetchError) in
            try attempts(for: prepared, into: sink, streamsOnWorker: true)
        }
    }

    /// `start`'s fetch of the attempts `makeAttempts` makes (or fails).
    private func start(into sink: BodySink, handle: FetchHandle,
                       completion: @escaping @Sendable (Result<FetchResponse, FetchError>) -> Void,
                       _ makeAttempts: () throws(FetchError) -> FetchAttempts) {
        let attempts: FetchAttempts
        let transfer: CurlTransfer
        do throws(FetchError) {
            attempts = try makeAttempts()
            do { transfer = try loops.makeTransfer(attempts.firstAttempt()) } catch { throw attempts.beforeAttempt(error) }
        } catch {
            return handle.continueOnTask { completion(.failure(error)) }
        }
        // Released by `CurlTransfer.finish` as it calls it (the handle holds the transfer meanwhile).
        // It holds the attempts (which hold the URL, the gate and the sink), not the request as well.
        // What the answer needs of the attempts, captured apart: read through the captured
        // attempts, the whole struct was copied (a retain and release per field) per fetch.
        // The attempts are moved into the callback (`consume`): captured as a copy, they were
        // copied field by field and the local destroyed (~0.6 k instructions per fetch).
        let url = attempts.url, gate = attempts.gate, made = attempts.attempt
        // The outcome is taken (`consuming`) and its response moved on: read out of a borrowed
        // outcome, the response (its header block, its body, its strings) was copied twice per
        // fetch on the loop thread, into a tuple and into `deliver`, and the outcome destroyed.
        transfer.completion = { [self, attempts = consume attempts] (outcome: consuming AttemptOutcome) in
            let response: AttemptResponse
            switch consume outcome {
            case .response(let answer) where FetchAttempts.delivers(answer):
                response = answer
            case let other:
                var attempts = attempts
                return goOn(attempts.next(after: other), attempts, loop: transfer.loop, sink: sink, handle: handle,
                            completion: completion)
            }
            let delivery = attempts.delivery
            gate?.answered(status: response.status)
            // A body that streamed to a worker is answered on it already (`CurlTransfer.finish`).
            // A 304 has no body for the sink, and its completion runs here: it may start the
            // next fetches here and hand the rest over (`FetchHandle.handOff`). Neither needs
            // a closure to run later (one context to allocate and free, per revalidation).
            // Any other answer joins its loop's round, which goes to a worker in one batch
            // (`CurlLoop.handOff`; issue 22).
            if transfer.handoff != nil || response.status == 304 {
                return completion(Self.delivered(response, delivery, url: url, to: sink))
            }
            let deliver: @Sendable () -> Void = { [response = consume response] in
                completion(Self.delivered(response, delivery, url: url, to: sink))
            }
            if let loop = transfer.loop {
                loop.handOff(deliver)   // the loop that ran it: its round
            } else {
                loops.workers.run([deliver])
            }
        }
        guard handle.register(transfer, on: loops) else {
            // Cancelled first: the transfer is answered (its placement given back), the fetch fails.
            let error = FetchAttempts.beforeAttempt(FetchError(.cancelled, url: url), url: url, made: made)
            transfer.completion = { _ in }   // answered here, so that its placement is given back
            transfer.finish(.failure(error))
            return handle.continueOnTask { completion(.failure(error)) }
        }
        loops.submit(transfer)
    }

    /// `start`'s fetch after an attempt it does not return: it fails, or goes
    /// on on a Swift task (a retry, a resumed redirect chain, the gate's decision).
    /// Without a gate the policy decides here, at once: a fetch that fails for
    /// good (no retry left: a 404, a refused connection) on `loop`, the loop
    /// that ran its attempt, completes as a 2xx answer does, in the loop's
    /// round on a completion worker (`CurlLoop.handOff`), not on a task made
    /// for it (the remote tier's misses: a 404 per URL it lacks).
    private func goOn(_ action: FetchAttempts.Action, _ attempts: FetchAttempts, loop: CurlLoop?, sink: BodySink,
                      handle: FetchHandle, completion: @escaping @Sendable (Result<FetchResponse, FetchError>) -> Void) {
        var action = action, attempts = attempts
        if case .askGate(let error) = action, attempts.gate == nil {
            action = attempts.decide(.usePolicy, for: error)
            // Not cancelled (that is `.fail` at once): the attempt ran, so it was answered on its loop (or its
            // worker, for a body that streamed there), never inside `submit`. An attempt never placed has no loop.
            if case .fail(let error) = action, let loop { return loop.handOff { completion(.failure(error)) } }
        }
        if case .fail(let error) = action {
            // Cancelled: maybe answered inside `submit`, before `start` returned.
            return handle.continueOnTask { completion(.failure(error)) }
        }
        handle.continueOnTask { [attempts, action] in
            do throws(FetchError) {
                completion(.success(try await self.drive(attempts, from: action, gate: attempts.gate, sink)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Ends the attempts to `url`'s host (scheme, host and port; any URL of
    /// it) that have received no byte of a response yet, failing each with
    /// `kind` and `detail`: those still resolving, connecting, in their TLS
    /// handshake, waiting to share a connection being set up, or with their
    /// request sent and nothing back (over plain http a request goes out on
    /// connect). For the owner of many fetches that has given the host up (a
    /// batch's host scheduler): such an attempt would otherwise hold on for
    /// the rest of its timeout. Not a cancellation: each fetch goes on as
    /// after any failed attempt (its gate decides whether it retries).
    /// Attempts whose response has begun go on, and so do redirected ones
    /// (on another host by then); so do fetches not started yet and retries
    /// in their backoff (`FetchAttemptGate.mayRetry`).
    public func endUnansweredAttempts(toHostOf url: String, failing kind: FetchError.Kind, detail: String) {
        loops.endUnanswered(toHostOf: url, kind: kind, detail: detail)
    }

    /// The state machine of a new fetch's attempts.
    private func attempts(for prepared: PreparedRequest, into sink: BodySink,
                          streamsOnWorker: Bool) throws(FetchError) -> FetchAttempts {
        // The request's fields are read in place: `prepared.request` copied the whole request and destroyed it.
        try attempts(url: prepared.url, lines: prepared.lines.get(), method: prepared.method, body: prepared.body,
                     bodyFile: prepared.bodyFile, gate: prepared.gate, origin: prepared.origin, into: sink,
                     streamsOnWorker: streamsOnWorker)
    }

    /// The attempts of `request`, made ready now (what `prepare` would make, unboxed).
    private func attempts(for request: FetchRequest, urlChecked: Bool, into sink: BodySink,
                          streamsOnWorker: Bool = false) throws(FetchError) -> FetchAttempts {
        try attempts(url: request.url, lines: lines(of: request, urlChecked: urlChecked).get(), method: request.method,
                     body: request.body, bodyFile: request.bodyFile, gate: request.gate,
                     origin: TransferOrigin(url: request.url), into: sink, streamsOnWorker: streamsOnWorker)
    }

    private func attempts(url: String, lines: [String], method: FetchRequest.Method, body: [UInt8],
                          bodyFile: FetchRequest.BodyFile?, gate: (any FetchAttemptGate)?, origin: TransferOrigin,
                          into sink: BodySink, streamsOnWorker: Bool) -> FetchAttempts {
        let policy = RetryPolicy(retries: configuration.retries,
                                 baseDelay: configuration.retryBaseDelay, maxDelay: configuration.retryMaxDelay)
        let firstSpec = TransferSpec(url: url, headerLines: lines, maxSize: configuration.bodyLimit,
                                     maxRedirects: configuration.maxRedirects, sink: sink, progress: configuration.progress,
                                     method: method, body: body, bodyFile: bodyFile,
                                     gate: gate, streamsOnWorker: streamsOnWorker, origin: origin)
        return FetchAttempts(url: url, firstSpec: firstSpec, policy: policy, maxRedirects: configuration.maxRedirects)
    }

    /// Carries out the attempts' actions on this task until the fetch ends.
    private func drive(_ attempts: FetchAttempts, from first: FetchAttempts.Action, gate: (any FetchAttemptGate)?,
                       _ sink: BodySink) async throws(FetchError) -> FetchResponse {
        var attempts = attempts
        var action = first
        while true {
            switch action {
            case .attempt(let spec, let resetSink, let delay):
                if delay > 0 {
                    do { try await Task.sleep(nanoseconds: UInt64(delay * 1e9)) } catch { throw attempts.cancelled }
                }
                if let error = attempts.retrying, let gate, !gate.mayRetry() { throw error }
                if resetSink {
                    do { try sink.reset() } catch { throw attempts.resetFailed(error) }
                }
                if Task.isCancelled {
                    action = attempts.next(after: .failure(FetchError(.cancelled, url: attempts.url)))
                    continue
                }
                let transfer: CurlTransfer
                do { transfer = try loops.makeTransfer(spec) } catch { throw attempts.beforeAttempt(error) }
                action = attempts.next(after: await Self.attempt(transfer, on: loops))
            case .deliver(let response, let count, let before, let resumedAt):
                gate?.answered(status: response.status)
                return try Self.deliver(response, url: attempts.url, to: sink, attempts: count, redirectsBefore: before,
                                        resumedAt: resumedAt)
            case .askGate(let error):
                action = attempts.decide(await gate?.failed(error) ?? .usePolicy, for: error)
            case .fail(let error):
                throw error
            }
        }
    }

    /// "Name: value" lines: the client's headers, overridden by the request's.
    /// For a GET, the codings `ContentDecoder` undoes are offered unless a header asked otherwise.
    /// libcurl's CURLOPT_HTTPHEADER reads "Name:" (nothing after the colon)
    /// as "do not send Name, not even libcurl's own": an empty value is
    /// written "Name;" (sent as "Name:"), a removed header "Name:".
    private static func headerLines(for request: FetchRequest, _ configuration: FetchConfiguration) -> [String] {
        if request.method == .put {
            // "Expect:" turns off 100-continue (one round trip per upload), except
            // when signing: libcurl 7.88 signs the empty header it does not send.
            // The type is not a form's.
            var lines = configuration.headers.map(line)
            lines += request.headers.map(line)
            lines += removals(configuration, except: [configuration.headers, request.headers])
            lines.append("Content-Type: application/octet-stream")
            return configuration.awsSigV4 == nil ? lines + ["Expect:"] : lines
        }
        // The client's fields, then the request's, each of those set over the fields before it
        // (`HTTPHeaders.set`: a name given again replaces every earlier field of that name, and comes
        // last), written in one pass into an array made once: a batch does this for every revalidation.
        let own = configuration.headers.fields, given = request.headers.fields
        var lines: [String] = []
        lines.reserveCapacity(own.count + given.count + 1)
        var offersCodings = false
        for field in own where !given.contains(where: { asciiCaseInsensitiveEqual($0.name, field.name) }) {
            offersCodings = offersCodings || asciiCaseInsensitiveEqual(field.name, "Accept-Encoding")
            lines.append(line(field))
        }
        for index in given.indices
        where !given[(index + 1)...].contains(where: { asciiCaseInsensitiveEqual($0.name, given[index].name) }) {
            offersCodings = offersCodings || asciiCaseInsensitiveEqual(given[index].name, "Accept-Encoding")
            lines.append(line(given[index]))
        }
        // A name the merged fields have is one of the client's or the request's.
        lines += removals(configuration, except: [configuration.headers, request.headers])
        if !offersCodings,
           !configuration.removedHeaders.contains(where: { asciiCaseInsensitiveEqual($0, "Accept-Encoding") }) {
            lines.append(Self.acceptEncodingLine)
        }
        return lines
    }

    /// "Name: value", its bytes copied into one allocation (appending piece by piece cost twice as
    /// much); "Name;" for a blank value (spaces and tabs only: empty to libcurl too; checked without a copy).
    private static func line(_ field: HTTPHeaders.Field) -> String {
        if field.value.utf8.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return field.name + ";" }
        var name = field.name, value = field.value
        return name.withUTF8 { name in
            value.withUTF8 { value in
                String(unsafeUninitializedCapacity: name.count + 2 + value.count) { line in
                    var end = line.initialize(fromContentsOf: name)
                    line[end] = UInt8(ascii: ":")
                    line[end + 1] = UInt8(ascii: " ")
                    end += 2
                    end = line[end...].initialize(fromContentsOf: value)
                    return end
                }
            }
        }
    }

    /// "Name:" for each of the configuration's `removedHeaders` that none of `headers` sends.
    private static func removals(_ configuration: FetchConfiguration, except headers: [HTTPHeaders]) -> [String] {
        configuration.removedHeaders.filter { name in headers.allSatisfy { $0[name] == nil } }.map { $0 + ":" }
    }

    private static let acceptEncodingLine = "Accept-Encoding: " + Defaults.acceptEncoding

    /// `deliver` of an answer and what `FetchAttempts.delivery` counted, as the fetch's result.
    private static func delivered(
        _ response: AttemptResponse, _ delivery: (attempts: Int, redirectsBefore: Int, resumedAt: String), url: String,
        to sink: BodySink
    ) -> Result<FetchResponse, FetchError> {
        Result { () throws(FetchError) in
            try deliver(response, url: url, to: sink, attempts: delivery.attempts,
                        redirectsBefore: delivery.redirectsBefore, resumedAt: delivery.resumedAt)
        }
    }

    /// Completes a successful attempt off the loop (on the awaiting task or a
    /// completion worker): hands a body the loop held in memory to the sink,
    /// parses headers, redacts URLs.
    private static func deliver(_ response: AttemptResponse, url: String, to sink: BodySink,
                                attempts: Int, redirectsBefore: Int, resumedAt: String) throws(FetchError) -> FetchResponse {
        // A 304's fields are parsed where they are read (`FetchResponse.headers`), not here on the loop.
        let headers = response.status == 304 ? nil : HTTPHeaders(parsing: response.rawHeaders)
        // A body that streamed was begun on the loop thread (or its worker); one held in memory is begun here.
        if (200..<300).contains(response.status) && Int64(response.bufferedBody.count) == response.bodyBytes {
            do {
                try sink.begin(status: response.status, headers: headers ?? HTTPHeaders())
                try sink.write(whole: response.bufferedBody)
            } catch {
                throw FetchError(.io, url: url, detail: (error as? FetchError)?.detail ?? "\(error)", attempts: attempts)
            }
        }
        // Most answers come from the URL asked for: redacted once.
        let shown = redactURL(url), effective = response.redirectedURL ?? resumedAt
        return FetchResponse(
            url: shown, effectiveURL: effective == url ? shown : redactURL(effective), status: response.status,
            headerFields: headers.map { .parsed($0) } ?? .block(response.rawHeaders), bodyBytes: response.bodyBytes, attempts: attempts,
            redirects: redirectsBefore + response.redirects, httpVersion: response.httpVersion, timings: response.timings)
    }

    /// One attempt, answered exactly once: `finish` resumes the continuation
    /// once, whether the transfer completes, fails, or is cancelled before or
    /// after its loop registered it (`TransferLoops.cancel`).
    private static func attempt(_ transfer: CurlTransfer, on loops: TransferLoops) async -> AttemptOutcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.completion = { continuation.resume(returning: $0) }
                loops.submit(transfer)
            }
        } onCancel: {
            loops.cancel(transfer)
        }
    }
}
