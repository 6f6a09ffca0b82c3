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
}
