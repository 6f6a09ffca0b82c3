import DiskCache
import Support

/// One URL of a chunk, looked up: what the batch needs to drop it as a
/// duplicate or report it.
struct PlannedURL: Sendable {
    /// The MD5 of the normalised URL (see `CacheKey.identify`).
    let identity: MD5.Digest
    /// The URL as given, with any password removed.
    let shown: String
    /// Nil when the batch was cancelled before the lookup.
    let plan: ImageLoader.Plan?
    /// How long the lookup took (seconds).
    let duration: Double
}

extension ImageLoader {
    /// URLs a batch takes up at once (fewer when its backlog has less room).
    static let chunkLimit = 128
    /// Below this many URLs a chunk is looked up on one thread: a second
    /// task costs more than it saves.
    static let parallelChunkMinimum = 16

    /// Looks up a chunk's URLs, the second half on another task (the
    /// cooperative pool's other thread), and returns them in input order.
    /// Each URL is parsed once: validation, normalisation, key and identity
    /// come from the same pass. Without `lookUp` (the batch is cancelled) only
    /// the identity is computed, so that duplicates are still recognised.
    /// A URL whose identity is in `seen` (a duplicate of an earlier chunk's
    /// URL) or earlier in its half of the chunk is not looked up either; a
    /// duplicate across the halves is, and the batch drops the answer.
    ///
    /// The answer comes in parts (one or two), in input order: joining them
    /// would copy every answer.
    func planChunk(_ urls: [String], lookUp: Bool, seen: DigestSet) async -> [[PlannedURL]] {
        guard lookUp, urls.count >= Self.parallelChunkMinimum else {
            return [planSlice(urls[...], lookUp: lookUp, seen: seen)]
        }
        let half = urls.count / 2
        async let second = planSlice(urls[half...], lookUp: true, seen: seen)
        let first = planSlice(urls[..<half], lookUp: true, seen: seen)
        return [first, await second]
    }

    private func planSlice(_ urls: ArraySlice<String>, lookUp: Bool, seen: DigestSet) -> [PlannedURL] {
        var planned: [PlannedURL] = []
        planned.reserveCapacity(urls.count)
        var mine = Set<MD5.Digest>(minimumCapacity: urls.count)
        for url in urls {
            let (key, identity) = CacheKey.identify(url)
            let shown = redactURL(url)
            guard lookUp, !seen.contains(identity), mine.insert(identity).inserted else {
                planned.append(PlannedURL(identity: identity, shown: shown, plan: nil, duration: 0))
                continue
            }
            let start = monotonicSeconds()
            let plan = plan(url, key: key)
            planned.append(PlannedURL(identity: identity, shown: shown, plan: plan,
                                      duration: monotonicSeconds() - start))
        }
        return planned
    }
}
