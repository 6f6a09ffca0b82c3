import DiskCache
import Fetch

/// One URL of a chunk, looked up: what the batch needs to drop it as a
/// duplicate or report it.
struct PlannedURL: Sendable {
    /// The MD5 of the normalised URL (see `CacheKey.identify`).
    let identity: MD5.Digest
    /// The URL as given, with any password removed.
    let shown: String
    /// Nil when the batch was cancelled before the lookup.
    let plan: ImageLoader.Plan?
    /// When the lookup started (`monotonicSeconds`), and how long it took.
    let start: Double
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
    func planChunk(_ urls: [String], lookUp: Bool) async -> [PlannedURL] {
        guard lookUp, urls.count >= Self.parallelChunkMinimum else {
            return planSlice(urls[...], lookUp: lookUp)
        }
        let half = urls.count / 2
        async let second = planSlice(urls[half...], lookUp: true)
        let first = planSlice(urls[..<half], lookUp: true)
        return first + (await second)
    }

    private func planSlice(_ urls: ArraySlice<String>, lookUp: Bool) -> [PlannedURL] {
        var planned: [PlannedURL] = []
        planned.reserveCapacity(urls.count)
        for url in urls {
            let (key, identity) = CacheKey.identify(url)
            let shown = redactURL(url)
            guard lookUp else {
                planned.append(PlannedURL(identity: identity, shown: shown, plan: nil, start: 0, duration: 0))
                continue
            }
            let start = monotonicSeconds()
            let plan = plan(url, key: key)
            planned.append(PlannedURL(identity: identity, shown: shown, plan: plan, start: start,
                                      duration: monotonicSeconds() - start))
        }
        return planned
    }
}
