import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// The running transfer of the handle whose callbacks' data is `userdata` (its
/// `CurlEasy`, see `CurlEasy.configure`): its `transferContext`, an unretained
/// `CurlTransfer`; nil between transfers (the callback then aborts, or lets go).
/// The handle is alive for the whole call (its loop holds it): borrowed, not
/// retained and released per call.
@inline(__always)
private func runningTransfer(_ userdata: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let userdata else { return nil }
    return Unmanaged<CurlEasy>.fromOpaque(userdata)._withUnsafeGuaranteedRef { $0.transferContext }
}

/// CURLOPT_WRITEFUNCTION. Returning less than asked aborts the transfer
/// (libcurl then reports CURLE_WRITE_ERROR, which `CurlTransfer.outcome`
/// explains from `exceededMaxSize` / `sinkError`); CURL_WRITEFUNC_PAUSE
/// keeps the chunk for later (`StreamHandoff`: no buffer free).
let curlWriteCallback: ccurl_data_callback = { data, size, count, userdata in
    guard let context = runningTransfer(userdata), let data else { return 0 }
    return Unmanaged<CurlTransfer>.fromOpaque(context)._withUnsafeGuaranteedRef {
        $0.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
    }
}

/// CURLOPT_HEADERFUNCTION: keeps the raw lines of the latest response (a
/// status line starts a new one, so redirects and 100-continue are dropped),
/// after `ResponseHeadCheck` has checked each one; a malformed line, or a
/// header block announcing a body not to be read (`acceptsDeclaredLength`),
/// aborts the transfer (libcurl then reports CURLE_WRITE_ERROR, which
/// `CurlTransfer.outcome` explains from `head.problem`, `declaredTooLarge`
/// or `errorBodySkipped`).
let curlHeaderCallback: ccurl_data_callback = { data, size, count, userdata in
    guard let context = runningTransfer(userdata), let data else { return 0 }
    // The transfer is alive for the whole call (its loop holds it): borrowed, not retained and released per line.
    return Unmanaged<CurlTransfer>.fromOpaque(context)._withUnsafeGuaranteedRef {
        $0.receiveHeaderLine(UnsafeRawBufferPointer(start: data, count: size * count))
    }
}

extension CurlTransfer {
    /// One line for the header callback (`curlHeaderCallback`); returns the bytes consumed (fewer aborts).
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Int {
        switch head.accept(line) {
        case .status:
            gate?.responding(status: head.status)
            keepConnectionForRetry()
            rawHeaders.removeAll(keepingCapacity: true)
            // One allocation for a usual header block, not a growth per few lines.
            if rawHeaders.capacity == 0 { rawHeaders.reserveCapacity(Defaults.headerBlockCapacity) }
            bodyStatusChecked = false
        case .field:
            // The blank line that ends a header block: is the body its Content-Length announces wanted?
            if head.isComplete && !acceptsDeclaredLength() { return 0 }
        case .trailer: return line.count
        case .malformed: return 0
        }
        rawHeaders.append(contentsOf: line)
        return line.count
    }
}

/// CURLOPT_PREREQFUNCTION: the connection is ready and the request about to
/// go (the name resolved; over https the handshake done, and the gate told
/// already at the TCP connection by `curlSSLContextCallback`): tells the
/// request's gate (`spec.gate`), which schedules by host. Same userdata and lifetime as the header callback.
let curlPrereqCallback: ccurl_prereq_callback = { userdata, _, _, _, _ in
    guard let context = runningTransfer(userdata) else { return Int32(CURL_PREREQFUNC_OK) }
    Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().gate?.connected()
    return Int32(CURL_PREREQFUNC_OK)
}

/// CURLOPT_SSL_CTX_FUNCTION, with the `CurlEasy` as its data: a new TLS
/// connection. libcurl 7.88 calls it once the TCP connection is made, before
/// the handshake (its SSL filter connects the socket first: `ssl_cf_connect`,
/// then `ossl_connect_step1`). Installs the client's CA store, and tells the
/// request's gate that the host connected: over https a host counts as
/// connected here, not after its handshake (CURLOPT_PREREQFUNCTION), so its
/// next transfers start now and wait to share this connection
/// (CURLOPT_PIPEWAIT); behind a host that never answers the handshake they
/// fail with it, after one connect timeout, not one after another. And keeps
/// the connection's TLS sessions resumable (`ccurl_ssl_ctx_keep_sessions`).
let curlSSLContextCallback: ccurl_ssl_ctx_callback = { _, sslContext, userdata in
    guard let userdata, let sslContext else { return CURLE_OK }
    ccurl_ssl_ctx_keep_sessions(sslContext)
    let easy = Unmanaged<CurlEasy>.fromOpaque(userdata).takeUnretainedValue()
    let installed = easy.installCertificates(in: sslContext)
    if installed == CURLE_OK, let context = easy.transferContext {
        Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue().gate?.connected()
    }
    return installed
}

/// CURLOPT_READFUNCTION: a PUT's body, from the transfer (`sendBody`).
/// CURL_READFUNC_ABORT stops the transfer (`uploadError` says why).
let curlReadCallback: ccurl_data_callback = { data, size, count, userdata in
    guard let userdata, let data else { return Int(CURL_READFUNC_ABORT) }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: data, count: size * count))
}

extension CurlTransfer {
    /// A response its fetch will retry (a retryable status, and `spec.mayRetry`)
    /// keeps its connection open for the retry, which is the host's next
    /// request, even when the attempt started as its host's last queued URL
    /// and was set to close it (`FetchAttemptGate.keepsConnection`). Over TLS
    /// a new connection would cost a full handshake (libcurl 7.88 keeps only
    /// 8 TLS sessions per share: see `CurlShare`). The retry itself then
    /// closes the connection as its host's last URL. Called at each status
    /// line, on the loop thread; libcurl reads the option when the transfer ends.
    func keepConnectionForRetry() {
        guard spec.mayRetry, RetryPolicy.isRetryable(status: head.status), let easy else { return }
        // Refused (it cannot be, for a long option): the connection closes, as it was set to.
        _ = easy.keepConnection()
    }

    /// Opens the file a PUT sends after `spec.body`, checked against what the
    /// request says it is; a sentence saying what is wrong, or nil.
    func openBodyFile(_ file: FetchRequest.BodyFile) -> String? {
        // O_NOATIME (a GNU flag Swift does not import): sending a cache entry is not a use of it
        // (its atime is the LRU clock); refused on another owner's file, which is read anyway.
        var fd = open(file.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | 0o1000000)
        if fd < 0 && errno == EPERM { fd = open(file.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { return "cannot read \(file.path): \(String(cString: strerror(errno)))" }
        var info = stat()
        guard fstat(fd, &info) == 0, UInt64(info.st_ino) == file.inode, Int64(info.st_size) == file.length else {
            _ = close(fd)
            return "\(file.path) changed before it could be sent"
        }
        uploadFD = fd
        return nil
    }

    /// Fills `buffer` with the next bytes of a PUT's body: `spec.body`, then
    /// the open file. 0 at the end; CURL_READFUNC_ABORT when the file cannot be read.
    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        var sent = 0
        if uploadOffset < spec.body.count {
            sent = min(buffer.count, spec.body.count - uploadOffset)
            spec.body.withUnsafeBytes { base.copyMemory(from: $0.baseAddress! + uploadOffset, byteCount: sent) }
            uploadOffset += sent
        }
        guard sent < buffer.count, uploadFD >= 0 else { return sent }
        while true {
            let n = read(uploadFD, base + sent, buffer.count - sent)
            if n >= 0 { return sent + n }
            if errno != EINTR { return Int(CURL_READFUNC_ABORT) }
        }
    }

    /// One chunk of the body; returns the bytes consumed (fewer aborts the transfer).
    func receiveBody(_ chunk: UnsafeRawBufferPointer) -> Int {
        if !bodyStatusChecked, let easy {
            deliverBody = (200..<300).contains(easy.long(CURLINFO_RESPONSE_CODE))
            bodyStatusChecked = true
            if deliverBody, let progress = spec.progress, progressLength == nil {
                var length: curl_off_t = -1
                let known = ccurl_easy_getinfo_off_t(easy.handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK && length >= 0
                let declared: Int64? = known ? Int64(length) : nil
                progress.bodyStarted(length: declared)
                progressLength = .some(declared)
            }
            if deliverBody {
                switch ContentDecoder.make(contentEncoding: head.contentEncoding) {
                case .success(let made): decoder = made
                case .failure(let problem):
                    decodeProblem = problem
                    return 0
                }
            }
        }
        // Bodies of error responses are not wanted by anyone: drop them.
        guard deliverBody else { return chunk.count }
        guard let decoder else {
            switch store(chunk) {
            case .kept:
                spec.progress?.received(chunk.count)
                return chunk.count
            case .stop:
                spec.progress?.received(chunk.count)
                return 0
            case .pause: return Int(CURL_WRITEFUNC_PAUSE)   // offered again once resumed: not counted yet
            }
        }
        // Progress counts bytes as they travel (the declared length is the encoded one).
        spec.progress?.received(chunk.count)
        if let problem = decoder.decode(chunk, emit: { store($0) == .kept }) {
            if !problem.detail.isEmpty { decodeProblem = problem }   // empty: `store` refused, and said why
            return 0
        }
        return chunk.count
    }

    enum Stored {
        case kept
        /// Abort: `exceededMaxSize` or `sinkError` says why.
        case stop
        /// Not taken: no buffer free for the worker (`StreamHandoff`); libcurl offers it again when resumed.
        case pause
    }

    /// Keeps one piece of the decoded body (held, or streamed to the sink
    /// here or through `handoff`).
    private func store(_ chunk: UnsafeRawBufferPointer) -> Stored {
        if bodyBytes + Int64(chunk.count) > spec.maxSize {
            exceededMaxSize = true
            return .stop
        }
        if !streaming {
            if bufferedBody.count + chunk.count <= Defaults.bufferedBodyLimit {
                if bufferedBody.isEmpty, !chunk.isEmpty, let source = chunk.baseAddress {
                    // The first piece (most often the whole body) is copied past the cache: a worker
                    // on the other core reads it next (`ccurl_copy_past_cache`).
                    bufferedBody = [UInt8](unsafeUninitializedCapacity: heldCapacity(first: chunk.count)) { room, count in
                        ccurl_copy_past_cache(room.baseAddress, source, chunk.count)
                        count = chunk.count
                    }
                } else {
                    bufferedBody.append(contentsOf: chunk)
                }
                bodyBytes += Int64(chunk.count)
                return .kept
            }
            // Too big to hold: stream from here on, starting with what was held.
            streaming = true
            let status = easy.map { $0.long(CURLINFO_RESPONSE_CODE) } ?? 200
            let headers = HTTPHeaders(parsing: rawHeaders)
            if spec.streamsOnWorker, decoder == nil, let easy, Self.pausesSafely(easy), let handoff = makeHandoff() {
                // A decoded body is not handed over: one chunk may decode to more than the buffers hold.
                self.handoff = handoff
                handoff.begin(status: status, headers: headers, held: &bufferedBody)
            } else {
                do {
                    try spec.sink.begin(status: status, headers: headers)
                    try bufferedBody.withUnsafeBytes { try spec.sink.write($0) }
                } catch {
                    sinkError = error
                    return .stop
                }
                bufferedBody = []
            }
        }
        if let handoff {
            if let failure = handoff.failure {
                sinkError = failure
                return .stop
            }
            guard handoff.write(chunk) else { return .pause }
        } else {
            do {
                try spec.sink.write(chunk)
            } catch {
                sinkError = error
                return .stop
            }
        }
        bodyBytes += Int64(chunk.count)
        return .kept
    }

    /// The room to hold a body in, from its first chunk: the `Content-Length`
    /// of a body in no content coding (never above `spec.maxSize`:
    /// `acceptsDeclaredLength`) up to what is ever held; `Defaults.heldBodyStartCapacity` for any other.
    /// A body held whole is then one allocation and one copy: it does not
    /// grow 16 → 32 → 64 KiB, copying itself each time (issue 22).
    private func heldCapacity(first: Int) -> Int {
        let unknown = Int64(Defaults.heldBodyStartCapacity)
        let expected = decoder == nil ? head.contentLength ?? unknown : unknown
        return Int(min(Int64(Defaults.bufferedBodyLimit), max(Int64(first), expected)))
    }

    /// Whether pausing the transfer's receiving is safe: HTTP/1, not HTTP/2,
    /// whose stream windows libcurl 7.88 may fail to reopen after a pause
    /// (curl issues 9180, 16960): there the body streams on the loop thread.
    private static func pausesSafely(_ easy: CurlEasy) -> Bool {
        let version = easy.long(CURLINFO_HTTP_VERSION)
        return version == Int(CURL_HTTP_VERSION_1_1) || version == Int(CURL_HTTP_VERSION_1_0)
    }

    /// A handoff to the least busy completion worker, which resumes this
    /// transfer through its loop; nil when no worker runs.
    private func makeHandoff() -> StreamHandoff? {
        guard let loop, let worker = loops.workers.leastBusy() else { return nil }
        return StreamHandoff(worker: worker, sink: spec.sink) { [weak self] in
            if let self { loop.resume(self) }
        }
    }
}
