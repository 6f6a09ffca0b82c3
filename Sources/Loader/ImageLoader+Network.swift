import DiskCache
import Fetch
import ImageFormats
#if canImport(Glibc)
import Glibc
#endif

extension ImageLoader {
    /// Response headers worth keeping: what freshness, revalidation, Vary
    /// and reporting need. Cookies and the like are never stored.
    static let storedHeaders: [String] = [
        "date", "etag", "last-modified", "cache-control", "expires", "age", "content-type",
        "vary", "pragma", "content-encoding", "content-location", "content-language",
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
            if let modified = conditional.header("Last-Modified"), HTTPDate.parse(modified) != nil {
                request.headers.set(name: "If-Modified-Since", value: modified)   // verbatim: nginx compares exactly
            }
        }
        // Resume (SPEC §5): a body cut off earlier continues where it stopped, if it is still the same one.
        let partial = entry == nil ? cache.partial(for: key.hex, url: key.storedURL) : nil
        if let partial, let validator = partial.validator {
            request.headers.set(name: "Range", value: "bytes=\(partial.length)-")
            request.headers.set(name: "If-Range", value: validator)
        }
        let sink = CacheSink(cache: cache, key: key.hex, partial: partial?.validator == nil ? nil : partial,
                             checkStructure: !options.acceptAnyContent)
        defer { sink.abandon() }
        let requestTime = currentUnixTime()
        let response: FetchResponse
        do {
            response = try await client.fetch(request, into: sink)
        } catch let error as FetchError {
            if error.kind == .network || error.kind == .timeout {
                let kept = CacheMetadata(url: key.storedURL, status: 200, requestTime: requestTime, responseTime: currentUnixTime(),
                                         headers: sink.headers.filter { Self.isStored($0.name) }
                                            .map { CacheMetadata.Header($0.name, $0.value) })
                _ = sink.keepPartial(kept, minimum: Defaults.resumeMinimum)
            }
            if error.status == 416, partial != nil {
                // The kept part no longer fits the resource (it shrank): drop it and ask for the whole body.
                cache.removePartial(key.hex)
                return await network(url: url, key: key, entry: entry)
            }
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
        if response.status == 206 && !sink.resumed {
            return .failure(LoadError(kind: .http, message: "HTTP 206 Partial Content to a request for the whole body",
                                      status: 206, attempts: response.attempts))
        }
        let body: ReceivedBody
        do { body = try sink.received() } catch {
            return .failure(LoadError(error, attempts: response.attempts))
        }
        return stored(body, structure: sink.structure, key: key, entry: entry, response: response,
                      requestTime: requestTime, responseTime: responseTime)
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
    private func stored(_ writer: ReceivedBody, structure: ImageStructure?, key: CacheKey, entry: CacheEntry?,
                        response: FetchResponse, requestTime: Double, responseTime: Double) -> Phase {
        let info: ImageInfo?
        switch structure?.inspection(head: writer.head) {
        case nil:
            info = ImageInfo.sniff(writer.head)   // any content may be stored (--any): the format only labels it
        case .notAnImage:
            // The server's label is quoted as the claim the bytes refute, never as proof.
            let label = response.headers["Content-Type"].map { "; the server labelled it \($0)" } ?? ""
            return .failure(LoadError(kind: .notAnImage,
                                      message: "not an image: the body is in no supported image format\(label)",
                                      status: response.status,
                                      attempts: response.attempts))
        case .broken(_, let problem):
            return .failure(LoadError(kind: .notAnImage, message: problem, status: response.status,
                                      attempts: response.attempts))
        case .image(let checked, _):
            info = checked
        }
        if !Self.mayStore(status: response.status, CacheControl(response.headers.values("Cache-Control"))) {
            // Never stored (§5.2.2.5); an older entry is dropped, since the server no longer allows keeping it.
            if entry != nil { _ = try? cache.remove(key.hex) }   // best effort: a leftover is only a stale entry
            return unstored(writer, info: info, response: response, storeFailure: nil)
        }
        guard let writer = writer as? CacheWriter else {
            // The cache could not be written: the body is only delivered (-o, --output-dir), with a warning.
            return unstored(writer, info: info, response: response, storeFailure: (writer as? SpoolFile)?.storeFailure)
        }
        let meta = CacheMetadata(
            // A resumed body is the whole 200 response it continues.
            url: key.storedURL, status: response.status == 206 ? 200 : response.status, requestTime: requestTime,
            responseTime: responseTime,
            headers: response.headers.filter { Self.isStored($0.name) }
                .map { CacheMetadata.Header($0.name, $0.value) },
            varyRequest: varyValues(response.headers),
            format: info?.format.name, width: info?.width, height: info?.height)
        do {
            let entry = try writer.commit(meta)
            return .success(result(entry, source: .network, response: response))
        } catch {
            return .failure(LoadError(error, attempts: response.attempts))
        }
    }

    /// A body that is not in the cache (`no-store`, or the cache could not
    /// be written: `storeFailure`), kept only until it is delivered.
    private func unstored(_ body: ReceivedBody, info: ImageInfo?, response: FetchResponse, storeFailure: String?) -> Phase {
        let transient: TransientBody
        do { transient = TransientBody(path: try body.keepUnstored()) } catch {
            let what = storeFailure.map { "\($0); and cannot keep the body" } ?? "cannot keep the no-store body"
            return .failure(LoadError(kind: .io, message: "\(what): \(error.message)", attempts: response.attempts))
        }
        var loaded = LoadResult(
            path: nil, source: .network, bytes: body.bytesWritten, status: response.status,
            contentType: response.headers["Content-Type"], format: info?.format, width: info?.width,
            height: info?.height, attempts: response.attempts, httpVersion: response.httpVersion,
            redirects: response.redirects, effectiveURL: response.effectiveURL, transientBody: transient)
        loaded.storeFailure = storeFailure
        return .success(loaded)
    }

    /// An error status or a transfer failure: remember an error status that
    /// is fresh by its own headers (RFC 9111 §3: explicit freshness, or the
    /// heuristic for 404, 405, 410, 414, 501); serve a stale copy if
    /// `--stale-if-error` allows.
    private func failed(_ error: FetchError, key: CacheKey, entry: CacheEntry?, requestTime: Double) -> Phase {
        let serverFailed = error.kind == .http && [500, 502, 503, 504].contains(error.status ?? 0)
        let networkFailed = [.dns, .connect, .tls, .timeout, .network].contains(error.kind) || serverFailed
        let requestWindow = options.fetch.headers.combined("Cache-Control").flatMap { CacheControl([$0]).staleIfError }
        if options.staleIfError, networkFailed, let entry, entry.metadata.hasBody,
           options.freshness.mayServeStale(entry.metadata, now: currentUnixTime(), requestWindow: requestWindow),
           case .success(var result) = hitPhase(entry, source: .stale) {
            // The stored copy stays: the error is not remembered over it.
            result.warning = "\(error.message); served a stale stored copy (--stale-if-error)"
            result.attempts = error.attempts
            result.reason = Self.staleIfErrorReason
            return .success(result)
        }
        if error.kind == .http, let status = error.status, let headers = error.headers {
            remember(status: status, headers: headers, key: key, requestTime: requestTime)
        }
        return .failure(LoadError(error))
    }

    /// Stores a final error status without its body when it is fresh now
    /// and may be stored; otherwise nothing is stored (an older entry stays
    /// until a response replaces it).
    private func remember(status: Int, headers: HTTPHeaders, key: CacheKey, requestTime: Double) {
        guard status >= 200 else { return }
        let cc = CacheControl(headers.values("Cache-Control"))
        guard Self.mayStore(status: status, cc), !cc.noCache else { return }
        let meta = CacheMetadata(
            url: key.storedURL, status: status, requestTime: requestTime, responseTime: currentUnixTime(),
            headers: headers.filter { Self.isStored($0.name) }
                .map { CacheMetadata.Header($0.name, $0.value) },
            varyRequest: varyValues(headers), hasBody: false)
        // The user's freshness settings (--no-heuristic) apply; no default lifetime for errors.
        var freshness = options.freshness
        freshness.maxAgeOverride = nil
        guard freshness.isFresh(meta, now: currentUnixTime()) else { return }
        _ = try? cache.storeWithoutBody(meta, key: key.hex)   // best effort: the failure is reported either way
    }

    /// RFC 9111 §3 with §5.2.2.3 and §5.2.2.5: `no-store` forbids storing,
    /// unless `must-understand` comes with a status code asyncfetch
    /// understands; `must-understand` with any other status forbids it too.
    static func mayStore(status: Int, _ cc: CacheControl) -> Bool {
        if cc.mustUnderstand { return StatusCacheability.understood.contains(status) }
        return !cc.noStore
    }

    private func result(_ entry: CacheEntry, source: Source, response: FetchResponse) -> LoadResult {
        let meta = entry.metadata
        return LoadResult(
            path: entry.bodyPath, source: source, bytes: meta.bodyLength, status: response.status,
            contentType: meta.header("Content-Type"), format: meta.format.flatMap(ImageFormat.init(name:)), width: meta.width, height: meta.height,
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
}

extension DiskCacheError {
    /// A failed system call on `path`, with `strerror(errno)`.
    static func io(_ operation: String, path: String) -> DiskCacheError {
        let code = Glibc.errno
        return DiskCacheError(.io, path: path, message: "\(operation) \(path): \(String(cString: strerror(code)))", errno: code)
    }
}
