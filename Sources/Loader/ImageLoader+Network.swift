import DiskCache
import Fetch

extension ImageLoader {
    /// Response headers worth keeping: what freshness, revalidation, Vary
    /// and reporting need. Cookies and the like are never stored.
    static let storedHeaders: Set<String> = [
        "date", "etag", "last-modified", "cache-control", "expires", "age", "content-type",
        "vary", "pragma", "content-encoding", "content-location",
    ]

    /// Downloads or revalidates one URL and stores the result.
    func network(url: String, key: CacheKey, entry: CacheEntry?) async -> Phase {
        var request = FetchRequest(url: url)
        if let entry, entry.metadata.hasBody {
            if let etag = entry.metadata.header("ETag") { request.headers.set(name: "If-None-Match", value: etag) }
            if let modified = entry.metadata.header("Last-Modified") {
                request.headers.set(name: "If-Modified-Since", value: modified)   // verbatim (nginx compares exactly)
            }
        }
        let writer: CacheWriter
        do { writer = try cache.makeWriter(for: key.hex) } catch {
            return .failure(LoadError(error))
        }
        defer { writer.abandon() }
        let requestTime = currentUnixTime()
        let response: FetchResponse
        do {
            response = try await client.fetch(request, into: CacheSink(writer))
        } catch let error as FetchError {
            return failed(error, key: key, entry: entry, requestTime: requestTime)
        } catch {
            return .failure(LoadError(kind: .network, message: "\(error)"))
        }
        let responseTime = currentUnixTime()
        if response.status == 304 {
            guard let entry else {
                return .failure(LoadError(kind: .http, message: "HTTP 304 Not Modified to an unconditional request",
                                          status: 304, attempts: response.attempts))
            }
            var meta = entry.metadata
            meta.requestTime = requestTime
            meta.responseTime = responseTime
            for field in response.headers where Self.storedHeaders.contains(field.name.lowercased()) {
                let lowered = field.name.lowercased()
                meta.headers.removeAll { $0.name.lowercased() == lowered }
            }
            meta.headers += response.headers.filter { Self.storedHeaders.contains($0.name.lowercased()) }
                .map { CacheMetadata.Header($0.name, $0.value) }
            do {
                let updated = try cache.updateMetadata(of: entry, to: meta)
                return .success(result(updated, source: .revalidated, response: response))
            } catch {
                return .failure(LoadError(error, attempts: response.attempts))
            }
        }
        let info = ImageInfo.sniff(writer.head)
        if info == nil && !options.acceptAnyContent {
            let type = response.headers["Content-Type"].map { " (Content-Type: \($0))" } ?? ""
            return .failure(LoadError(kind: .notAnImage, message: "not an image\(type)", status: response.status,
                                      attempts: response.attempts))
        }
        let meta = CacheMetadata(
            url: key.normalizedURL, status: response.status, requestTime: requestTime, responseTime: responseTime,
            headers: response.headers.filter { Self.storedHeaders.contains($0.name.lowercased()) }
                .map { CacheMetadata.Header($0.name, $0.value) },
            varyRequest: varyValues(response.headers),
            format: info?.format, width: info?.width, height: info?.height)
        if CacheControl(response.headers.values("Cache-Control")).noStore {
            return .success(LoadResult(
                path: nil, source: .network, bytes: writer.bytesWritten, status: response.status,
                contentType: response.headers["Content-Type"], format: info?.format, width: info?.width,
                height: info?.height, attempts: response.attempts, httpVersion: response.httpVersion,
                redirects: response.redirects, effectiveURL: response.effectiveURL))
        }
        do {
            let stored = try writer.commit(meta)
            return .success(result(stored, source: .network, response: response))
        } catch {
            return .failure(LoadError(error, attempts: response.attempts))
        }
    }

    private func failed(_ error: FetchError, key: CacheKey, entry: CacheEntry?, requestTime: Double) -> Phase {
        if error.kind == .http, let status = error.status, status == 404 || status == 410, let headers = error.headers {
            let meta = CacheMetadata(
                url: key.normalizedURL, status: status, requestTime: requestTime, responseTime: currentUnixTime(),
                headers: headers.filter { Self.storedHeaders.contains($0.name.lowercased()) }
                    .map { CacheMetadata.Header($0.name, $0.value) },
                varyRequest: varyValues(headers), hasBody: false)
            let lifetime = Freshness(defaultTTL: 0).lifetime(meta)
            if lifetime.explicit && lifetime.seconds > 0 && !CacheControl(headers.values("Cache-Control")).noStore {
                _ = try? cache.storeWithoutBody(meta, key: key.hex)   // best effort: the failure is reported either way
            }
        }
        let serverFailed = error.kind == .http && (error.status ?? 0) >= 500
        let networkFailed = [.dns, .connect, .tls, .timeout, .network].contains(error.kind) || serverFailed
        if options.staleIfError, networkFailed, let entry, entry.metadata.hasBody,
           options.freshness.mayServeStale(entry.metadata) {
            return hitPhase(entry, source: .stale)
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

    /// The values this request sent for each header the response's `Vary` names.
    private func varyValues(_ headers: HTTPHeaders) -> [CacheMetadata.Header] {
        guard let vary = headers.combined("Vary") else { return [] }
        return vary.split(separator: ",").map { trimWhitespaceLower($0) }.filter { !$0.isEmpty && $0 != "*" }
            .map { CacheMetadata.Header($0, options.fetch.headers[$0] ?? "") }
    }
}
