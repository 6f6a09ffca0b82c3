/// Runs HTTP GET transfers through one libcurl multi handle, each awaited
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
    private let lock = Lock()
    private nonisolated(unsafe) var loop: CurlLoop?   // guarded by lock; created on first use

    public init(configuration: FetchConfiguration = FetchConfiguration()) {
        self.configuration = configuration
    }

    deinit { loop?.shutdown() }

    /// libcurl's version, e.g. "7.88.1".
    public static var curlVersion: String { CurlGlobal.version }

    /// Fetches `request`, streaming a 2xx body into `sink`, retrying as the
    /// configuration allows. Returns for 2xx and 304; throws `FetchError`
    /// for everything else, `.cancelled` when the task is cancelled.
    public func fetch(_ request: FetchRequest, into sink: BodySink) async throws -> FetchResponse {
        try Self.validate(request.url)
        let loop = try runningLoop()
        let policy = RetryPolicy(retries: max(0, configuration.retries),
                                 baseDelay: configuration.retryBaseDelay, maxDelay: configuration.retryMaxDelay)
        var merged = configuration.headers
        for field in request.headers { merged.set(name: field.name, value: field.value) }
        let spec = TransferSpec(url: request.url, headerLines: merged.map { "\($0.name): \($0.value)" },
                                configuration: configuration, sink: sink)
        var attempt = 0
        while true {
            attempt += 1
            var error: FetchError
            if Task.isCancelled {
                error = FetchError(.cancelled, url: request.url)
            } else {
                switch await Self.attempt(spec, on: loop) {
                case .response(let response) where (200..<300).contains(response.status) || response.status == 304:
                    return FetchResponse(
                        url: redactURL(request.url), effectiveURL: response.effectiveURL, status: response.status,
                        headers: response.headers, bodyBytes: response.bodyBytes, attempts: attempt,
                        redirects: response.redirects, httpVersion: response.httpVersion, timings: response.timings)
                case .response(let response):
                    error = FetchError(.http, url: request.url, status: response.status, headers: response.headers)
                case .failure(let failure):
                    error = failure
                }
            }
            error.attempts = attempt
            guard error.kind != .cancelled, attempt <= policy.retries, policy.isRetryable(error) else { throw error }
            do {
                try await Task.sleep(nanoseconds: UInt64(policy.delay(after: attempt, error: error) * 1e9))
            } catch {
                throw FetchError(.cancelled, url: request.url, attempts: attempt)
            }
            do { try sink.reset() } catch {
                throw FetchError(.io, url: request.url, detail: (error as? FetchError)?.detail ?? "\(error)", attempts: attempt)
            }
        }
    }

    /// Rejects what must never reach the network: malformed URLs and schemes
    /// other than http and https (SPEC §5: before any I/O).
    public static func validate(_ url: String) throws(FetchError) {
        guard let schemeEnd = schemeSeparator(in: url) else {
            throw FetchError(.invalidURL, url: url, detail: "expected scheme://host/path")
        }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard !scheme.isEmpty, scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }) else {
            throw FetchError(.invalidURL, url: url, detail: "malformed scheme")
        }
        guard scheme == "http" || scheme == "https" else {
            throw FetchError(.unsupportedScheme, url: url, detail: "'\(scheme)'")
        }
        if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw FetchError(.invalidURL, url: url, detail: "spaces or control characters")
        }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        if hostPort.isEmpty || hostPort.hasPrefix(":") {
            throw FetchError(.invalidURL, url: url, detail: "no host")
        }
    }

    private func runningLoop() throws(FetchError) -> CurlLoop {
        let result = lock.withLock { () -> Result<CurlLoop, FetchError> in
            if let loop { return .success(loop) }
            do throws(FetchError) {
                let created = try CurlLoop(maxConnections: configuration.maxConnections)
                loop = created
                return .success(created)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// One attempt, answered exactly once by the loop thread.
    private static func attempt(_ spec: TransferSpec, on loop: CurlLoop) async -> AttemptOutcome {
        let transfer = CurlTransfer(id: loop.makeID(), spec: spec)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                transfer.continuation = continuation
                loop.submit(transfer)
            }
        } onCancel: {
            loop.cancel(transfer)
        }
    }
}
