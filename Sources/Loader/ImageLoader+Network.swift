import DiskCache
import Fetch
#if canImport(Glibc)
import Glibc
#endif

extension ImageLoader {
    /// Response headers worth keeping: what freshness, revalidation, Vary
    /// and reporting need. Cookies and the like are never stored.
    static let storedHeaders: [String] = [
        "date", "etag", "last-modified", "cache-control", "expires", "age", "content-type",
        "vary", "pragma", "content-encoding", "content-location",
    ]

    /// Whether a response header is one of `storedHeaders` (any case), without lowercased copies.
    static func isStored(_ name: String) -> Bool {
        storedHeaders.contains { asciiCaseInsensitiveEqual($0, name) }
    }

    /// Downloads or revalidates one URL and stores the result (RFC 9111 §3,
    /// §4.3). `entry` is the stored entry the plan found (Vary-matched), if any.
    func network(url: String, key: CacheKey, entry: CacheEntry?) async -> Phase {
        var request = FetchRequest(url: url)
        let conditional = entry.map(\.metadata).flatMap { $0.hasBody ? $0 : nil }
        if let conditional {
            if let etag = conditional.header("ETag") { request.headers.set(name: "If-None-Match", value: etag) }
            if let modified = conditional.header("Last-Modified") {
                request.headers.set(name: "If-Modified-Since", value: modified)   // verbatim: nginx compares exactly
            }
        }
        let sink = CacheSink(cache: cache, key: key.hex)
        defer { sink.abandon() }
        let requestTime = currentUnixTime()
        let response: FetchResponse
        do {
            response = try await client.fetch(request, into: sink)
        } catch let error as FetchError {
            return failed(error, key: key, entry: entry, requestTime: requestTime)
        } catch {
            return .failure(LoadError(kind: .network, message: "\(error)"))
        }
        let responseTime = currentUnixTime()
        if response.status == 304 {
            guard let entry, let conditional else {
                return .failure(LoadError(kind: .http, message: "HTTP 304 Not Modified to an unconditional request",
                                          status: 304, attempts: response.attempts))
            }
            guard Self.validatorMatches(response.headers, conditional) else {
                // §4.3.4: the 304 names another representation; ours cannot be updated. Ask again, unconditionally.
                return await network(url: url, key: key, entry: nil)
            }
            return revalidated(entry, response: response, requestTime: requestTime, responseTime: responseTime)
        }
        if response.status == 206 {
            return .failure(LoadError(kind: .http, message: "HTTP 206 Partial Content to a request for the whole body",
                                      status: 206, attempts: response.attempts))
        }
        let writer: CacheWriter
        do { writer = try sink.openedWriter() } catch {
            return .failure(LoadError(error, attempts: response.attempts))
        }
        return stored(writer, key: key, entry: entry, response: response, requestTime: requestTime, responseTime: responseTime)
    }

    /// A 304: keep the body; every header the 304 carries replaces the stored
    /// one of that name, the others stay (RFC 9111 §3.2).
    private func revalidated(_ entry: CacheEntry, response: FetchResponse, requestTime: Double, responseTime: Double) -> Phase {
        var meta = entry.metadata
        meta.requestTime = requestTime
        meta.responseTime = responseTime
        let updates = response.headers.filter { Self.isStored($0.name) }
        meta.headers.removeAll { stored in updates.contains { asciiCaseInsensitiveEqual($0.name, stored.name) } }
        meta.headers += updates.map { CacheMetadata.Header($0.name, $0.value) }
        if updates.contains(where: { asciiCaseInsensitiveEqual($0.name, "vary") }) { meta.varyRequest = varyValues(response.headers) }
        do {
            let updated = try cache.updateMetadata(of: entry, to: meta)
            return .success(result(updated, source: .revalidated, response: response))
        } catch {
            return .failure(LoadError(error, attempts: response.attempts))
        }
    }

    /// A 2xx with a body: validate it as an image, then store it (or, for
    /// `no-store`, keep it only until it is delivered).
    private func stored(_ writer: CacheWriter, key: CacheKey, entry: CacheEntry?, response: FetchResponse,
                        requestTime: Double, responseTime: Double) -> Phase {
        let info = ImageInfo.sniff(writer.head)
        if !options.acceptAnyContent {
            guard let info else {
                // The server's label is quoted as the claim the bytes refute, never as proof.
                let label = response.headers["Content-Type"].map { "; the server labelled it \($0)" } ?? ""
                return .failure(LoadError(kind: .notAnImage,
                                          message: "not an image: the body is in no supported image format\(label)",
                                          status: response.status,
                                          attempts: response.attempts))
            }
            let tail: [UInt8]
            do { tail = try readTail(writer) } catch {
                return .failure(LoadError(error, attempts: response.attempts))
            }
            if let problem = ImageCompleteness.problem(format: info.format, head: writer.head, tail: tail,
                                                       length: writer.bytesWritten) {
                return .failure(LoadError(kind: .notAnImage, message: problem, status: response.status,
                                          attempts: response.attempts))
            }
        }
        if CacheControl(response.headers.values("Cache-Control")).noStore {
            // Never stored (§5.2.2.5); an older entry is dropped, since the server no longer allows keeping it.
            if entry != nil { _ = try? cache.remove(key.hex) }   // best effort: a leftover is only a stale entry
            let transient = TransientBody(path: writer.temporaryPath + ".deliver")
            guard link(writer.temporaryPath, transient.path) == 0 else {
                let code = errno
                return .failure(LoadError(kind: .io, message: "cannot keep the no-store body at \(transient.path): "
                                          + String(cString: strerror(code)), attempts: response.attempts))
            }
            return .success(LoadResult(
                path: nil, source: .network, bytes: writer.bytesWritten, status: response.status,
                contentType: response.headers["Content-Type"], format: info?.format, width: info?.width,
                height: info?.height, attempts: response.attempts, httpVersion: response.httpVersion,
                redirects: response.redirects, effectiveURL: response.effectiveURL, transientBody: transient))
        }
        let meta = CacheMetadata(
            url: key.normalizedURL, status: response.status, requestTime: requestTime, responseTime: responseTime,
            headers: response.headers.filter { Self.isStored($0.name) }
                .map { CacheMetadata.Header($0.name, $0.value) },
            varyRequest: varyValues(response.headers),
            format: info?.format, width: info?.width, height: info?.height)
        do {
            let entry = try writer.commit(meta)
            return .success(result(entry, source: .network, response: response))
        } catch {
            return .failure(LoadError(error, attempts: response.attempts))
        }
    }

    /// An error status or a transfer failure: remember a 404/410 that has
    /// explicit freshness; serve a stale copy if `--stale-if-error` allows.
    private func failed(_ error: FetchError, key: CacheKey, entry: CacheEntry?, requestTime: Double) -> Phase {
        if error.kind == .http, let status = error.status, status == 404 || status == 410, let headers = error.headers {
            let meta = CacheMetadata(
                url: key.normalizedURL, status: status, requestTime: requestTime, responseTime: currentUnixTime(),
                headers: headers.filter { Self.isStored($0.name) }
                    .map { CacheMetadata.Header($0.name, $0.value) },
                varyRequest: varyValues(headers), hasBody: false)
            let lifetime = Freshness(defaultTTL: 0).lifetime(meta)
            let cc = CacheControl(headers.values("Cache-Control"))
            if lifetime.explicit && lifetime.seconds > 0 && !cc.noStore && !cc.noCache {
                _ = try? cache.storeWithoutBody(meta, key: key.hex)   // best effort: the failure is reported either way
            }
        }
        let serverFailed = error.kind == .http && [500, 502, 503, 504].contains(error.status ?? 0)
        let networkFailed = [.dns, .connect, .tls, .timeout, .network].contains(error.kind) || serverFailed
        if options.staleIfError, networkFailed, let entry, entry.metadata.hasBody,
           options.freshness.mayServeStale(entry.metadata),
           case .success(var result) = hitPhase(entry, source: .stale) {
            result.warning = "\(error.message); served a stale stored copy (--stale-if-error)"
            result.attempts = error.attempts
            return .success(result)
        }
        return .failure(LoadError(error))
    }

    private func result(_ entry: CacheEntry, source: Source, response: FetchResponse) -> LoadResult {
        let meta = entry.metadata
        return LoadResult(
            path: entry.bodyPath, source: source, bytes: meta.bodyLength, status: response.status,
            contentType: meta.header("Content-Type"), format: meta.format, width: meta.width, height: meta.height,
            attempts: response.attempts, httpVersion: response.httpVersion, redirects: response.redirects,
            effectiveURL: response.effectiveURL)
    }

    /// RFC 9111 §4.3.4: a 304 updates the stored response only if its strong
    /// validator (when it sends one) is the stored one. Compared weakly, as
    /// servers add or drop `W/` when they compress.
    static func validatorMatches(_ headers: HTTPHeaders, _ stored: CacheMetadata) -> Bool {
        guard let new = headers["ETag"], let old = stored.header("ETag") else { return true }
        func opaque(_ tag: String) -> Substring {
            let trimmed = Substring(trimWhitespace(tag))
            return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
        }
        return opaque(new) == opaque(old)
    }

    /// The last `ImageCompleteness.tailLength` bytes of the body just written:
    /// from the head when the body is that small, else one `pread`.
    private func readTail(_ writer: CacheWriter) throws(DiskCacheError) -> [UInt8] {
        let length = writer.bytesWritten
        let want = Int(min(Int64(ImageCompleteness.tailLength), length))
        if length <= Int64(writer.head.count) { return Array(writer.head.suffix(want)) }
        let fd = open(writer.temporaryPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DiskCacheError.io("cannot read", path: writer.temporaryPath) }
        defer { close(fd) }
        var tail = [UInt8](repeating: 0, count: want)
        var got = 0
        while got < want {
            let n = tail.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, want - got, off_t(length) - off_t(want - got)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw DiskCacheError.io("cannot read", path: writer.temporaryPath) }
            got += n
        }
        return tail
    }
}

extension DiskCacheError {
    /// A failed system call on `path`, with `strerror(errno)`.
    static func io(_ operation: String, path: String) -> DiskCacheError {
        let code = Glibc.errno
        return DiskCacheError(.io, path: path, message: "\(operation) \(path): \(String(cString: strerror(code)))", errno: code)
    }
}
