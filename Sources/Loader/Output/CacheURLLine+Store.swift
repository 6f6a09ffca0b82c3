import DiskCache
import Fetch

/// The outcomes of `cache path` and `cache rm` for one URL, from the store.
extension CacheURLLine {
    /// The URL's body path when it has an intact entry with a body; the
    /// status when the entry is a remembered error (no body); why, when
    /// the entry is there but broken (what `cache list` shows for it).
    /// No store (its directory does not exist): nothing is cached.
    public static func path(of url: String, in store: DiskCacheStore?) -> CacheURLLine {
        guard let key = key(of: url) else { return CacheURLLine(url: url, outcome: .invalid) }
        guard let store else { return CacheURLLine(url: url, outcome: .notCached) }
        guard let entry = store.lookup(key.hex) else {
            return CacheURLLine(url: url, outcome: store.brokenProblem(key).map { .broken(problem: $0) } ?? .notCached)
        }
        guard entry.metadata.hasBody else { return CacheURLLine(url: url, outcome: .withoutBody(status: entry.metadata.status)) }
        return CacheURLLine(url: url, outcome: .cached(path: entry.bodyPath))
    }

    /// Removes the URL's entry and any part of its body kept to be resumed
    /// (either is `removed`); the error too when that failed.
    /// `removedKeys` holds the keys this command removed already: a URL
    /// listed again (or another spelling of it, `HTTP://…#x`) is `removed`
    /// too, not "not cached" with exit 1, as the fetch run reports it once.
    /// No store (its directory does not exist): nothing is cached.
    public static func remove(_ url: String, from store: DiskCacheStore?,
                              removedKeys: inout Set<String>) -> (line: CacheURLLine, error: DiskCacheError?) {
        guard let key = key(of: url) else { return (CacheURLLine(url: url, outcome: .invalid), nil) }
        guard let store else { return (CacheURLLine(url: url, outcome: .notCached), nil) }
        if removedKeys.contains(key.hex) { return (CacheURLLine(url: url, outcome: .removed), nil) }
        do {
            let removedEntry = try store.remove(key.hex)
            let removed = store.removePartial(key.hex) || removedEntry
            if removed { removedKeys.insert(key.hex) }
            return (CacheURLLine(url: url, outcome: removed ? .removed : .notCached), nil)
        } catch {
            return (CacheURLLine(url: url, outcome: .failed(message: error.message)), error)
        }
    }

    /// The URL's key, nil for one a fetch would refuse before any I/O (a
    /// space or control character, a port out of range, a scheme that is
    /// not fetched: `FetchClient.validate`), which can be in no cache: it
    /// is `invalid`, as the fetch reports it, not `not cached`.
    private static func key(of url: String) -> CacheKey? {
        guard (try? FetchClient.validate(url)) != nil else { return nil }
        return try? CacheKey(url: url)
    }
}
