import Support

/// Runs HTTP transfers on libcurl transfer loops (threads with a multi
/// handle each, one per core by default: `TransferLoops`), each awaited
/// from a Swift task. Cancelling the awaiting task aborts its transfer.
///
/// ```swift
/// let client = FetchClient()
/// let sink = try FileSink(path: "/tmp/cat.png")
/// let response = try await client.fetch(FetchRequest(url: "https://example.com/cat.png"), into: sink)
/// ```
///
/// Every error thrown is a `FetchError`.
public final class FetchClient: Sendable {
    public let configuration: FetchConfiguration
    /// The transfer threads, each started on first use.
    private let loops: TransferLoops

    public init(configuration: FetchConfiguration = FetchConfiguration()) {
        self.configuration = configuration
        loops = TransferLoops(configuration: configuration)
    }

    deinit { loops.shutdown() }

    /// libcurl's version, e.g. "7.88.1".
    public static var curlVersion: String { CurlGlobal.version }

    /// Fetches `request`, streaming a 2xx body into `sink`, retrying as the
    /// configuration allows. Returns for 2xx and 304; throws `FetchError`
    /// for everything else, `.cancelled` when the task is cancelled.
    public func fetch(_ request: FetchRequest, into sink: BodySink) async throws -> FetchResponse {
        try Self.validate(request.url)
        let policy = RetryPolicy(retries: max(0, configuration.retries),
                                 baseDelay: configuration.retryBaseDelay, maxDelay: configuration.retryMaxDelay)
        let lines = headerLines(for: request)
        let onConnected = request.gate.map { gate in { @Sendable in gate.connected() } }
        let firstSpec = TransferSpec(url: request.url, headerLines: lines, maxSize: configuration.maxSize,
                                     maxRedirects: configuration.maxRedirects, sink: sink, progress: configuration.progress,
                                     method: request.method, body: request.body, bodyFile: request.bodyFile,
                                     onConnected: onConnected)
        var spec = firstSpec
        var redirectsBefore = 0
        var attempt = 0
        /// Attempts that count against `retries`: not those the gate had tried again.
        var counted = 0
        while true {
            attempt += 1
            counted += 1
            var error: FetchError
            if Task.isCancelled {
                error = FetchError(.cancelled, url: request.url)
            } else {
                let transfer: CurlTransfer
                do { transfer = try loops.makeTransfer(spec) } catch {
                    throw FetchError(error.kind, url: request.url, curlCode: error.curlCode, curlMessage: error.curlMessage,
                                     detail: error.detail, attempts: attempt)
                }
                switch await Self.attempt(transfer, on: loops) {
                case .response(let response) where (200..<300).contains(response.status) || response.status == 304:
                    request.gate?.answered(status: response.status)
                    return try Self.deliver(response, of: request, to: sink, attempts: attempt,
                                            redirectsBefore: redirectsBefore, resumedAt: spec.url)
                case .response(let response):
                    error = FetchError(.http, url: request.url, status: response.status,
                                       headers: HTTPHeaders(parsing: response.rawHeaders),
                                       detail: response.bodyProblem.map { "the body was also malformed: " + $0 })
                case .interrupted(_, let url, let redirects)
                    where redirectsBefore + redirects <= configuration.maxRedirects:
                    // A redirect chain on a server that closes idle connections: go on
                    // from the hop that died, on a fresh connection, with what is left
                    // of the redirect budget (so a loop is still `redirects` after 10 hops).
                    // This is not a retry: each resume follows at least one more hop.
                    redirectsBefore += redirects
                    spec = TransferSpec(url: url, headerLines: Self.linesForRedirect(lines, from: request.url, to: url),
                                        maxSize: configuration.maxSize,
                                        maxRedirects: configuration.maxRedirects - redirectsBefore, sink: sink,
                                        progress: configuration.progress, method: request.method, body: request.body, bodyFile: request.bodyFile,
                                        onConnected: onConnected)
                    attempt -= 1
                    counted -= 1
                    do { try sink.reset() } catch {
                        throw FetchError(.io, url: request.url, detail: (error as? FetchError)?.detail ?? "\(error)",
                                         attempts: attempt)
                    }
                    continue
                case .interrupted(let failure, _, _), .failure(let failure):
                    error = failure
                }
                if error.kind == .redirects && redirectsBefore > 0 {
                    // libcurl counted only the hops since the chain was resumed.
                    error = FetchError(.redirects, url: request.url, curlCode: error.curlCode,
                                       curlMessage: "Maximum (\(configuration.maxRedirects)) redirects followed")
                }
            }
            error.attempts = attempt
            guard error.kind != .cancelled else { throw error }
            switch await request.gate?.failed(error) ?? .usePolicy {
            case .usePolicy:
                guard counted <= policy.retries, policy.isRetryable(error) else { throw error }
                do {
                    try await Task.sleep(nanoseconds: UInt64(policy.delay(after: counted, error: error) * 1e9))
                } catch {
                    throw FetchError(.cancelled, url: request.url, attempts: attempt)
                }
            case .tryAgain:
                counted -= 1
            case .stop:
                throw error
            case .cancelled:
                throw FetchError(.cancelled, url: request.url, attempts: attempt)
            }
            do { try sink.reset() } catch {
                throw FetchError(.io, url: request.url, detail: (error as? FetchError)?.detail ?? "\(error)", attempts: attempt)
            }
            spec = firstSpec
            redirectsBefore = 0
        }
    }

    /// "Name: value" lines: the client's headers, overridden by the request's.
    /// For a GET, the codings `ContentDecoder` undoes are offered unless a header asked otherwise.
    private func headerLines(for request: FetchRequest) -> [String] {
        if request.method == .put {
            // "Expect:" turns off 100-continue (one round trip per upload), except
            // when signing: libcurl 7.88 signs the empty header it does not send.
            // The type is not a form's.
            var lines = configuration.headers.map { "\($0.name): \($0.value)" }
            lines += request.headers.map { "\($0.name): \($0.value)" }
            lines.append("Content-Type: application/octet-stream")
            return configuration.awsSigV4 == nil ? lines + ["Expect:"] : lines
        }
        var merged = configuration.headers
        for field in request.headers { merged.set(name: field.name, value: field.value) }
        var lines = merged.map { "\($0.name): \($0.value)" }
        if merged["Accept-Encoding"] == nil { lines.append(Self.acceptEncodingLine) }
        return lines
    }

    private static let acceptEncodingLine = "Accept-Encoding: " + Defaults.acceptEncoding

    /// Completes a successful attempt on the awaiting task: hands a body the
    /// loop held in memory to the sink, parses headers, redacts URLs.
    private static func deliver(_ response: AttemptResponse, of request: FetchRequest, to sink: BodySink,
                                attempts: Int, redirectsBefore: Int, resumedAt: String) throws(FetchError) -> FetchResponse {
        let headers = HTTPHeaders(parsing: response.rawHeaders)
        // A body that streamed was begun by the loop thread; one held in memory is begun here.
        if (200..<300).contains(response.status) && Int64(response.bufferedBody.count) == response.bodyBytes {
            do {
                try sink.begin(status: response.status, headers: headers)
                try response.bufferedBody.withUnsafeBytes { try sink.write($0) }
            } catch {
                throw FetchError(.io, url: request.url, detail: (error as? FetchError)?.detail ?? "\(error)", attempts: attempts)
            }
        }
        let url = redactURL(request.url)
        return FetchResponse(
            url: url, effectiveURL: redactURL(response.redirectedURL ?? resumedAt), status: response.status,
            headers: headers, bodyBytes: response.bodyBytes, attempts: attempts,
            redirects: redirectsBefore + response.redirects, httpVersion: response.httpVersion, timings: response.timings)
    }

    /// One attempt, answered exactly once: `finish` resumes the continuation
    /// once, whether the transfer completes, fails, or is cancelled before or
    /// after its loop registered it (`TransferLoops.cancel`).
    private static func attempt(_ transfer: CurlTransfer, on loops: TransferLoops) async -> AttemptOutcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.continuation = continuation
                loops.submit(transfer)
            }
        } onCancel: {
            loops.cancel(transfer)
        }
    }
}
