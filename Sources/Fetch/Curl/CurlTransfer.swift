import CCurl
import Support
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One attempt of one request, owned by the `CurlLoop` it was placed on.
///
/// Ownership and threading: `TransferLoops.makeTransfer` creates it on the
/// awaiting task or `FetchClient.start`, which sets `completion` and hands it to `TransferLoops.submit`
/// (through the client's queue of transfers waiting for a slot, if it has a
/// limit, then the loop's queue); from then on only the loop thread touches
/// its fields, except `cancelRequested`, which `cancel` sets from any thread,
/// and `handoff`, which the completion reads on the worker the loop handed
/// the transfer's end to (after the loop set it, through the worker's queue).
/// `completion` is called exactly once (`finish`): by the loop (on the
/// transfer's worker, for a body that streamed to one), or by
/// `TransferLoops` for a transfer it never handed to the loop.
///
/// Callback lifetime: the write, header and prerequest callbacks find
/// `Unmanaged.passUnretained(self)` in their handle's `CurlEasy.transferContext`
/// (the read callback receives it as userdata). That is safe because the
/// loop holds a strong reference while the handle is in the multi handle
/// (its `active` table from just after `curl_multi_add_handle` to just
/// before `curl_multi_remove_handle`, the caller's own reference around
/// both; a stranded handle's transfer in `stranded`), and libcurl calls them only
/// inside the loop's calls (`curl_multi_socket_action`, `curl_easy_pause`)
/// while the handle is added.
///
/// Bodies: the first `Defaults.bufferedBodyLimit` bytes of a 2xx body are
/// kept in `bufferedBody`; a body that fits is handed to the sink after the
/// transfer, off the loop (by the awaiting task or a completion worker), so
/// that small files cost the loop thread one copy instead of a write and
/// whatever the sink does (hashing).
/// A larger body is flushed and then streamed: from the loop thread, or,
/// for `spec.streamsOnWorker` and a body without content codings, through a
/// few buffers to a completion worker (`handoff`), so memory stays flat
/// however large it is. Such a transfer is answered on that worker, after
/// its last write (`finish`).
final class CurlTransfer: @unchecked Sendable {
    let spec: TransferSpec
    let loops: TransferLoops
    /// The loop that runs it (`loop`), chosen by `loops` (`place(on:)`), retained once when
    /// placed and released by `deinit`. An `Atomic` of an `Unmanaged` reference, whose
    /// `load` is inlined: `AtomicLazyReference.load()` ran generic here (the `Unmanaged`
    /// metadata looked up, ~640 instructions a read; three reads a cold URL, two of them on
    /// the loop thread).
    private let placedLoop = Atomic<Unmanaged<CurlLoop>?>(nil)
    /// Called once with the outcome (`finish`): resumes the awaiting task's
    /// continuation, or is `FetchClient.start`'s callback. Released as it is called.
    var completion: (@Sendable (consuming AttemptOutcome) -> Void)?
    /// Set (once) by `CurlLoop.cancel`, read by the loop before it starts the
    /// transfer: a cancel that overtakes the `add` still stops it.
    let cancelRequested = Atomic<Bool>(false)
    /// A PUT's body as it is sent (`curlReadCallback`): bytes of `spec.body`
    /// sent so far, then the open `spec.bodyFile` (closed by `deinit`).
    var uploadOffset = 0
    var uploadFD: Int32 = -1

    // Loop-thread state.
    var easy: CurlEasy?
    /// Its place in its loop's `ActiveTransfers` while it runs there; -1 otherwise.
    var activeSlot = -1
    /// When it was started waiting to share a connection being set up
    /// (CURLOPT_PIPEWAIT; `CurlLoop.restartWaiting`), in monotonic seconds; nil otherwise.
    var waitingSince: Double?
    // Changed in place by the header callback, once per header line, on the loop
    // thread only: no dynamic exclusivity check (2 `swift_beginAccess` a line).
    @exclusivity(unchecked) var rawHeaders: [UInt8] = []
    @exclusivity(unchecked) var head = ResponseHeadCheck()
    var bodyStatusChecked = false
    var deliverBody = false
    var streaming = false
    // Changed in place by the write callback, on the loop thread only: no dynamic exclusivity check.
    @exclusivity(unchecked) var bufferedBody: [UInt8] = []
    @exclusivity(unchecked) var bodyBytes: Int64 = 0
    var exceededMaxSize = false
    /// A 2xx body's `Content-Length` above the limit: refused at the end of its header block.
    var declaredTooLarge: Int64?
    /// An error status's body, longer than the limit, was not read (it is dropped anyway).
    var errorBodySkipped = false
    var sinkError: Error?
    /// Undoes the 2xx body's content codings (nil: none), made at its first byte.
    var decoder: ContentDecoder?
    /// Why the body could not be decoded (the write callback then aborted the transfer).
    var decodeProblem: ContentDecoder.Problem?
    /// Where a streamed body's writes go, when not to the sink here (`StreamHandoff`).
    var handoff: StreamHandoff?
    /// The declared length this attempt's body told `spec.progress` (nil: unknown), once started.
    var progressLength: Int64??
    /// `bodyBytes` as the loop's stall sweep last saw it, and since when it has
    /// not grown, in monotonic seconds (`endedBodyStall`).
    var sweptBytes: Int64 = 0
    var quietSince: Double = 0

    /// What the loops need of `spec.url` (see `TransferOrigin`).
    let origin: TransferOrigin
    var multiplexingHost: Substring? { origin.multiplexingHost }
    /// `spec.gate`, held on its own: the loop thread's callbacks ask it once
    /// or twice per attempt, and `spec.gate` read through the transfer copied
    /// the whole `TransferSpec` (a retain and release per field) each time.
    let gate: (any FetchAttemptGate)?

    init(spec: consuming TransferSpec, loops: TransferLoops) {
        origin = spec.origin ?? TransferOrigin(url: spec.url)
        gate = spec.gate
        self.spec = spec
        self.loops = loops
    }

    deinit {
        placedLoop.load(ordering: .acquiring)?.release()   // `place(on:)`'s retain
        if uploadFD >= 0 { _ = close(uploadFD) }   // read-only: nothing to report
    }

    /// The loop that runs it; nil for a transfer answered before it was
    /// placed. Set once (`place(on:)`), before the transfer is handed to that
    /// loop: when made, or for a client with a transfer limit when granted a
    /// slot. Any thread may read it: a write-once atomic reference, so no
    /// lock guards it (`TransferLoops.cancel` reads it under its own lock
    /// only to see it together with its queue of waiting transfers).
    var loop: CurlLoop? { placedLoop.load(ordering: .acquiring)?.takeUnretainedValue() }

    /// Places the transfer on `loop` (`TransferLoops`); once only.
    func place(on loop: CurlLoop) {
        let retained = Unmanaged.passRetained(loop)
        let (placed, earlier) = placedLoop.compareExchange(expected: nil, desired: retained, ordering: .acquiringAndReleasing)
        guard !placed else { return }
        retained.release()
        precondition(earlier?.takeUnretainedValue() === loop, "a transfer placed twice")
    }

    /// Answers the attempt (`completion`); a second call is a no-op. Gives back what
    /// its placement took first (`TransferLoops.finished`). A body that
    /// streamed to a worker is answered there, after its last write, and fails
    /// if the sink refused one the loop did not hear of in time.
    func finish(_ outcome: consuming AttemptOutcome) {
        if let length = progressLength {
            spec.progress?.bodyEnded(length: length, received: bodyBytes)
            progressLength = nil
        }
        guard let completion else { return }
        self.completion = nil
        loops.finished(self)
        guard let handoff else { return completion(outcome) }
        let url = spec.url, answered = consume outcome   // a `let`, for the closure to capture
        let answer: @Sendable () -> Void = {
            guard let failure = handoff.failure, case .response(let response) = answered, (200..<300).contains(response.status) else {
                return completion(answered)
            }
            completion(.failure(Self.writeFailed(failure, url: url, curlMessage: nil)))
        }
        if !handoff.worker.run(answer) { answer() }   // no worker any more: its writes are over
    }

    /// The error of a transfer whose sink refused a write (CURLE_WRITE_ERROR).
    static func writeFailed(_ failure: any Error, url: String, curlMessage: String?) -> FetchError {
        let detail = (failure as? FetchError)?.detail ?? String(describing: failure)
        return FetchError(.io, url: url, curlCode: Int(CURLE_WRITE_ERROR.rawValue), curlMessage: curlMessage, detail: detail)
    }

    /// Points `easy` at this transfer; `waitForMultiplexing` sets CURLOPT_PIPEWAIT.
    func attach(_ easy: CurlEasy, waitForMultiplexing: Bool) -> FetchError? {
        self.easy = easy
        if let failure = easy.prepare(url: spec.url, headerLines: spec.headerLines, maxRedirects: spec.maxRedirects,
                                      waitForMultiplexing: waitForMultiplexing,
                                      userdata: Unmanaged.passUnretained(self).toOpaque()) {
            return failure.error(url: spec.url)
        }
        var uploadLength = Int64(spec.body.count)
        if spec.method == .put, let file = spec.bodyFile {
            if let problem = openBodyFile(file) { return FetchError(.io, url: spec.url, detail: problem) }
            uploadLength += file.length
        }
        if let failure = easy.prepareMethod(spec.method, length: uploadLength, userdata: Unmanaged.passUnretained(self).toOpaque()) {
            return failure.error(url: spec.url)
        }
        return nil
    }

    /// Reads the result of a finished attempt off its handle.
    func outcome(code: CURLcode, easy: CurlEasy) -> AttemptOutcome {
        let redirects = easy.long(CURLINFO_REDIRECT_COUNT)
        if code != CURLE_OK {
            var failure = error(for: code, easy: easy)
            failure.responseStarted = head.status != 0
            failure.closedBeforeAnswer = closedBeforeAnswer(code, easy: easy)
            if redirects > 0, failure.effectiveURL == nil, let reached = easy.string(CURLINFO_EFFECTIVE_URL) {
                failure.effectiveURL = redactURL(reached)
            }
            // Which proxy libcurl went through, decided now, as libcurl did (libcurl 7.88 cannot say):
            // a message read later, in a process whose environment changed since, stays true.
            // The proxy's failure: not reached, its name unresolved, or no answer from it in time
            // (no status line, nor an answer to a CONNECT: a tunnel it opened is the origin's).
            let proxysOwn = failure.kind == .connect || (failure.kind == .dns && code == CURLE_COULDNT_RESOLVE_PROXY)
                || (failure.kind == .timeout && head.status == 0 && easy.long(CURLINFO_HTTP_CONNECTCODE) == 0)
            if proxysOwn, easy.readsProxyEnvironment {
                failure.proxy = ProxyEnvironment.proxy(for: failure.effectiveURL ?? spec.url)
            }
            if diedOnReuse(code), redirects > 0, bodyBytes == 0, let url = easy.string(CURLINFO_EFFECTIVE_URL) {
                return .interrupted(failure, url: url, redirects: redirects)
            }
            // A 4xx or 5xx whose status line and headers arrived intact, and
            // whose body then broke: the status is what a user or a script
            // needs (issue 23 item 4); the message adds the broken body.
            if head.isComplete, head.status >= 400, errorBodySkipped || Self.brokeTheBody(code) {
                var response = attemptResponse(easy, redirects: redirects)
                if !errorBodySkipped { response.bodyProblem = lowercasingFirst(easy.errorText(for: code)) }
                return .response(response)
            }
            return .failure(failure)
        }
        guard head.isComplete else {
            return .failure(FetchError(malformed: "the connection closed inside the response headers", url: spec.url))
        }
        if let decoder, !decoder.finished {
            // The transfer ended (all the bytes announced, or the connection
            // closed a body without a length) before its codings did.
            return .failure(FetchError(.network, url: spec.url, detail: ContentDecoder.cutShort))
        }
        if !bodyStatusChecked, let problem = emptyBodyProblem() {
            return .failure(FetchError(malformed: problem, url: spec.url))
        }
        return .response(attemptResponse(easy, redirects: redirects))
    }

    /// Why a 2xx body that never came (no byte of it: `bodyStatusChecked` is
    /// unset) is not a body: its `Content-Encoding` names a coding, and an
    /// empty body is no stream of it (a gzip member, a zlib, brotli or zstd
    /// stream has a header and an end; SPEC §5: a decoded body counts only
    /// when its coding says the stream ended). Not for 204 and 205, which
    /// have no content (RFC 9110 §15.3.5, §15.3.6). nil: nothing wrong.
    private func emptyBodyProblem() -> String? {
        guard (200..<300).contains(head.status), head.status != 204, head.status != 205 else { return nil }
        switch ContentDecoder.make(contentEncoding: head.contentEncoding) {
        case .success(nil): return nil
        case .success(_?): return "the body is empty, but its Content-Encoding (\(head.contentEncoding ?? "")) says it is compressed"
        case .failure(let problem): return problem.detail
        }
    }

    /// Whether to read the body announced by the header block that just ended,
    /// by its `Content-Length` (libcurl's CURLOPT_MAXFILESIZE would refuse any
    /// status, and a coded body by its encoded size): a 2xx body in no content
    /// coding above the limit is refused before any byte of it (with a coding
    /// the limit is on the decoded bytes, counted as they come); an error
    /// status's body above the limit, dropped anyway, is not read: the status
    /// is the answer. A redirect's body is libcurl's to skip.
    func acceptsDeclaredLength() -> Bool {
        guard let length = head.contentLength, length > spec.maxSize else { return true }
        if (200..<300).contains(head.status) && head.contentEncoding == nil {
            declaredTooLarge = length
            return false
        }
        if head.status >= 400 {
            errorBodySkipped = true
            return false
        }
        return true
    }

    /// Errors in a body whose response head was complete.
    private static func brokeTheBody(_ code: CURLcode) -> Bool {
        code == CURLE_PARTIAL_FILE || code == CURLE_RECV_ERROR || code == CURLE_BAD_CONTENT_ENCODING
            || code == CURLE_WEIRD_SERVER_REPLY || code == CURLE_HTTP2 || code == CURLE_HTTP2_STREAM
    }

    private func attemptResponse(_ easy: CurlEasy, redirects: Int) -> AttemptResponse {
        let versionText: String
        switch easy.long(CURLINFO_HTTP_VERSION) {
        case Int(CURL_HTTP_VERSION_1_0): versionText = "1.0"
        case Int(CURL_HTTP_VERSION_2_0): versionText = "2"
        case Int(CURL_HTTP_VERSION_3): versionText = "3"
        default: versionText = "1.1"
        }
        return AttemptResponse(
            status: easy.long(CURLINFO_RESPONSE_CODE), rawHeaders: rawHeaders, bufferedBody: bufferedBody,
            bodyBytes: bodyBytes, redirectedURL: redirects > 0 ? easy.string(CURLINFO_EFFECTIVE_URL) : nil,
            redirects: redirects, httpVersion: versionText,
            timings: .init(nameLookup: easy.seconds(CURLINFO_NAMELOOKUP_TIME), connect: easy.seconds(CURLINFO_CONNECT_TIME),
                           firstByte: easy.seconds(CURLINFO_STARTTRANSFER_TIME), total: easy.seconds(CURLINFO_TOTAL_TIME)))
    }

    /// A failed attempt as a `FetchError`: the kind from the one mapping, plus
    /// what only this transfer knows (it aborted a write, and why).
    private func error(for code: CURLcode, easy: CurlEasy) -> FetchError {
        let curlCode = Int(code.rawValue)
        let text = easy.errorText(for: code)
        let limit = "the \(spec.maxSize)-byte limit"
        if code == CURLE_WRITE_ERROR {
            if let declaredTooLarge {
                // Refused as CURLOPT_MAXFILESIZE would (its code), but only for a body that counts.
                return FetchError(.tooLarge, url: spec.url, curlCode: Int(CURLE_FILESIZE_EXCEEDED.rawValue),
                                  curlMessage: "Maximum file size exceeded",
                                  detail: "Content-Length \(declaredTooLarge) exceeds \(limit)")
            }
            if exceededMaxSize {
                return FetchError(.tooLarge, url: spec.url, curlCode: curlCode, curlMessage: text,
                                  detail: "the body went past \(limit)")
            }
            if let sinkError { return Self.writeFailed(sinkError, url: spec.url, curlMessage: text) }
            if let decodeProblem {
                return decodeProblem.malformed
                    ? FetchError(malformed: decodeProblem.detail, url: spec.url, curlCode: curlCode)
                    : FetchError(.network, url: spec.url, curlCode: curlCode, detail: decodeProblem.detail)
            }
        }
        if let problem = head.problem {
            return FetchError(malformed: problem, url: spec.url, curlCode: curlCode, curlMessage: text)
        }
        if code == CURLE_UNSUPPORTED_PROTOCOL {
            // libcurl says this both for a redirect it refused and for a response
            // it could not parse. The first URL was checked before any I/O, so it
            // is a refused redirect only when the last response redirects to
            // another scheme; the message then names that target.
            if let target = refusedRedirectTarget() {
                var refused = FetchError(.unsupportedScheme, url: spec.url, curlCode: curlCode, curlMessage: text,
                                         detail: "redirect to \(redactURL(target))")
                // Where it failed, whatever libcurl's effective URL says (it keeps the last hop's for a `data:` target).
                refused.effectiveURL = redactURL(target)
                return refused
            }
            return FetchError(malformed: lowercasingFirst(text), url: spec.url, curlCode: curlCode, curlMessage: text)
        }
        if code == CURLE_WEIRD_SERVER_REPLY || code == CURLE_BAD_CONTENT_ENCODING {
            return FetchError(malformed: lowercasingFirst(text), url: spec.url, curlCode: curlCode, curlMessage: text)
        }
        return FetchError(FetchError.Kind(curlCode: code), url: spec.url, curlCode: curlCode, curlMessage: text)
    }

    /// The `Location` of the last response when it is a redirect to a scheme
    /// other than http and https (a relative reference keeps the scheme).
    private func refusedRedirectTarget() -> String? {
        guard (300..<400).contains(head.status),
              let location = HTTPHeaders(parsing: rawHeaders)["Location"].map(trimWhitespace), !location.isEmpty
        else { return nil }
        guard let colon = location.utf8.firstIndex(of: 0x3A) else { return nil }
        let scheme = location.utf8[..<colon]
        guard let first = scheme.first, (0x61...0x7A).contains(first | 0x20),
              scheme.allSatisfy({ byte in
                  (0x30...0x39).contains(byte) || (0x61...0x7A).contains(byte | 0x20) || byte == 0x2B || byte == 0x2D || byte == 0x2E
              }) else { return nil }
        let lower = String(decoding: scheme, as: UTF8.self).lowercased()
        return lower == "http" || lower == "https" ? nil : location
    }

    /// The connection closed or was reset before any byte of a response
    /// (no header line, no body byte, no proxy refusing the tunnel): the
    /// host accepts connections and drops them (`FetchError.closedBeforeAnswer`).
    /// libcurl has already retried a reused connection that died so (`diedOnReuse`).
    /// Over https it happens in the TLS handshake: libcurl 7.88 with OpenSSL 3
    /// then says CURLE_SSL_CONNECT_ERROR with ECONNRESET for a reset, and
    /// "SSL_ERROR_SYSCALL" for an end of stream (a handshake that failed any
    /// other way, an alert or a bad certificate, is not this).
    ///
    /// CURLINFO_OS_ERRNO alone may be an earlier transfer's: libcurl before
    /// 8.8 keeps it on the easy handle until another error replaces it, and
    /// the handles are reused. The error text is this transfer's own
    /// (`CurlEasy.prepare` clears it), and a reset in it is there too
    /// ("Recv failure: Connection reset by peer").
    private func closedBeforeAnswer(_ code: CURLcode, easy: CurlEasy) -> Bool {
        guard rawHeaders.isEmpty, bodyBytes == 0 else { return false }
        let tunnel = easy.long(CURLINFO_HTTP_CONNECTCODE)
        guard tunnel == 0 || (200..<300).contains(tunnel) else { return false }
        if diedOnReuse(code) { return true }
        guard code == CURLE_SSL_CONNECT_ERROR else { return false }
        let text = easy.errorText(for: code)
        if text.contains("SSL_ERROR_SYSCALL") { return true }
        return easy.long(CURLINFO_OS_ERRNO) == Int(ECONNRESET) && text.contains(String(cString: strerror(ECONNRESET)))
    }

    /// A request on a reused connection that the server had closed: libcurl
    /// retries on a fresh connection itself, but only five times per transfer
    /// (redirect hops included), then gives up with one of these.
    private func diedOnReuse(_ code: CURLcode) -> Bool {
        code == CURLE_SEND_ERROR || code == CURLE_RECV_ERROR || code == CURLE_GOT_NOTHING
    }
}

private func lowercasingFirst(_ text: String) -> String {
    guard let first = text.first, first.isUppercase, !(text.dropFirst().first?.isUppercase ?? false) else { return text }
    return first.lowercased() + text.dropFirst()
}
