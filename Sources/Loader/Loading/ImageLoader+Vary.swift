import DiskCache
import HTTPCaching

/// RFC 9111 §4.1 for this loader's requests: the rules are `VaryRequest`'s.
extension ImageLoader {
    /// The request side of `Vary`: the headers this loader sends.
    var varyRequest: VaryRequest {
        VaryRequest(headers: options.fetch.headers, userAgent: options.fetch.userAgent,
                    removedHeaders: options.fetch.removedHeaders)
    }

    /// Whether `entry` may answer this loader's requests (`VaryRequest.matches`).
    func varyMatches(_ entry: CacheEntry) -> Bool {
        guard entry.metadata.hasHeader(.vary) else { return true }   // the usual case: no copies
        return varyRequest.matches(entry.metadata)
    }

    /// Why an `--offline` query that found `entry` (intact, but not matching
    /// this request's headers) is `empty`: the headers its `Vary` names that differ.
    func offlineVaryMiss(_ entry: CacheEntry) -> EmptyReason {
        .storedForOtherHeaders(vary: varyRequest.mismatches(entry.metadata))
    }
}
