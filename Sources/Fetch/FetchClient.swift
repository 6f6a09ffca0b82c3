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
        let loop: CurlLoop
        do { loop = try runningLoop() } catch {
            throw FetchError(error.kind, url: request.url, curlCode: error.curlCode, curlMessage: error.curlMessage,
                             detail: error.detail)
        }
        let policy = RetryPolicy(retries: max(0, configuration.retries),
                                 baseDelay: configuration.retryBaseDelay, maxDelay: configuration.retryMaxDelay)
        let spec = TransferSpec(url: request.url, headerLines: headerLines(for: request),
                                maxSize: configuration.maxSize, sink: sink)
        var attempt = 0
        while true {
            attempt += 1
            var error: FetchError
            if Task.isCancelled {
                error = FetchError(.cancelled, url: request.url)
            } else {
                switch await Self.attempt(spec, on: loop) {
                case .response(let response) where (200..<300).contains(response.status) || response.status == 304:
                    return try Self.deliver(response, of: request, to: sink, attempts: attempt)
                case .response(let response):
                    error = FetchError(.http, url: request.url, status: response.status,
                                       headers: HTTPHeaders(parsing: response.rawHeaders))
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

    /// "Name: value" lines: the client's headers, overridden by the request's.
    private func headerLines(for request: FetchRequest) -> [String] {
        if configuration.headers.isEmpty {
            return request.headers.map { "\($0.name): \($0.value)" }
        }
        var merged = configuration.headers
        for field in request.headers { merged.set(name: field.name, value: field.value) }
        return merged.map { "\($0.name): \($0.value)" }
    }

    /// Completes a successful attempt on the awaiting task: hands a body the
    /// loop held in memory to the sink, parses headers, redacts URLs.
    private static func deliver(_ response: AttemptResponse, of request: FetchRequest, to sink: BodySink,
                                attempts: Int) throws(FetchError) -> FetchResponse {
        if !response.bufferedBody.isEmpty {
            do {
                try response.bufferedBody.withUnsafeBytes { try sink.write($0) }
            } catch {
                throw FetchError(.io, url: request.url, detail: (error as? FetchError)?.detail ?? "\(error)", attempts: attempts)
            }
        }
        let url = redactURL(request.url)
        return FetchResponse(
            url: url, effectiveURL: response.redirectedURL.map(redactURL) ?? url, status: response.status,
            headers: HTTPHeaders(parsing: response.rawHeaders), bodyBytes: response.bodyBytes, attempts: attempts,
            redirects: response.redirects, httpVersion: response.httpVersion, timings: response.timings)
    }

    /// Rejects what must never reach the network: malformed URLs and schemes
    /// other than http and https (SPEC §5: before any I/O). No request was
    /// made, so the error counts no attempts.
    public static func validate(_ url: String) throws(FetchError) {
        if isPlainlyValid(url) { return }
        try validateFully(url)
    }

    /// `validate` without the fast path: every check, each with its error.
    static func validateFully(_ url: String) throws(FetchError) {
        guard let schemeEnd = schemeSeparator(in: url) else {
            // "mailto:…", "data:…": a scheme, only not one that is fetched. ("host:8080/x" is no scheme.)
            if let scheme = leadingScheme(url), !equalsIgnoringASCIICase(scheme.utf8, "http"),
               !equalsIgnoringASCIICase(scheme.utf8, "https") {
                throw FetchError(.unsupportedScheme, url: url, detail: "'\(scheme.lowercased())'", attempts: 0)
            }
            throw FetchError(.invalidURL, url: url, detail: "expected scheme://host/path", attempts: 0)
        }
        let bytes = url.utf8
        let scheme = bytes[..<schemeEnd.lowerBound]
        guard let first = scheme.first, isASCIILetter(first), scheme.allSatisfy({
            isASCIILetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }) else {
            throw FetchError(.invalidURL, url: url, detail: "malformed scheme", attempts: 0)
        }
        guard equalsIgnoringASCIICase(scheme, "http") || equalsIgnoringASCIICase(scheme, "https") else {
            throw FetchError(.unsupportedScheme, url: url,
                             detail: "'\(String(url[..<schemeEnd.lowerBound]).lowercased())'", attempts: 0)
        }
        if bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw FetchError(.invalidURL, url: url, detail: "spaces or control characters", attempts: 0)
        }
        let rest = bytes[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        // Where the user info ends is ambiguous with two '@' (libcurl takes the first): refused.
        if authority.firstIndex(of: UInt8(ascii: "@")) != authority.lastIndex(of: UInt8(ascii: "@")) {
            throw FetchError(.invalidURL, url: url, detail: "more than one '@' before the path (write %40)", attempts: 0)
        }
        let hostPort = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[authority.index(after: $0)...] } ?? authority
        if hostPort.isEmpty || hostPort.first == UInt8(ascii: ":") {
            throw FetchError(.invalidURL, url: url, detail: "no host", attempts: 0)
        }
        var port: Substring.UTF8View?
        if hostPort.first == UInt8(ascii: "[") {
            guard let close = hostPort.firstIndex(of: UInt8(ascii: "]")) else {
                throw FetchError(.invalidURL, url: url, detail: "unterminated IPv6 address", attempts: 0)
            }
            let after = hostPort[hostPort.index(after: close)...]
            if let colon = after.first {
                guard colon == UInt8(ascii: ":") else { throw FetchError(.invalidURL, url: url, detail: "malformed host", attempts: 0) }
                port = after.dropFirst()
            }
        } else if let colon = hostPort.firstIndex(of: UInt8(ascii: ":")) {
            port = hostPort[hostPort.index(after: colon)...]
        }
        // Empty ("host:") means the default port, as in RFC 3986.
        if let port, !port.isEmpty {
            guard port.count <= 5, port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let number = Int(Substring(port)), number >= 1, number <= 65535 else {
                throw FetchError(.invalidURL, url: url, detail: "malformed port '\(Substring(port))'", attempts: 0)
            }
        }
    }

    /// The scheme of a URL written without "//" ("mailto:x@y", "tel:5551234"):
    /// letters, digits, "+" and "-" up to the first ":". Not a scheme: one
    /// letter (a drive, "C:"), a name with a "." ("example.com:…"), or a name
    /// followed by 1 to 5 digits and then the end, "/", "?" or "#" (a host and
    /// port without a scheme, "localhost:8080/x").
    private static func leadingScheme(_ url: String) -> Substring? {
        let bytes = url.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = bytes[..<colon]
        guard scheme.count > 1, let first = scheme.first, isASCIILetter(first), scheme.allSatisfy({
            isASCIILetter($0) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
        }) else { return nil }
        let rest = bytes[bytes.index(after: colon)...]
        let digits = rest.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        let after = rest.dropFirst(digits.count).first
        if (1...5).contains(digits.count),
           after == nil || after == UInt8(ascii: "/") || after == UInt8(ascii: "?") || after == UInt8(ascii: "#") {
            return nil
        }
        return Substring(scheme)
    }

    private func runningLoop() throws(FetchError) -> CurlLoop {
        let result = lock.withLock { () -> Result<CurlLoop, FetchError> in
            if let loop { return .success(loop) }
            do throws(FetchError) {
                let created = try CurlLoop(configuration: configuration)
                loop = created
                return .success(created)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// One attempt, answered exactly once by the loop thread: `finish` resumes
    /// the continuation once, whether the transfer completes, fails, or is
    /// cancelled before or after the loop registered it (`CurlLoop.cancel`).
    private static func attempt(_ spec: TransferSpec, on loop: CurlLoop) async -> AttemptOutcome {
        let transfer = CurlTransfer(spec: spec)
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

private func isASCIILetter(_ byte: UInt8) -> Bool {
    (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
}

private func equalsIgnoringASCIICase(_ bytes: Substring.UTF8View, _ lowercase: StaticString) -> Bool {
    guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
    return zip(bytes, UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount))
        .allSatisfy { ($0 | 0x20) == $1 }
}
