import DiskCache
import Support

/// One URL of a chunk, looked up: what the batch needs to drop it as a
/// duplicate or report it.
struct PlannedURL: Sendable {
    /// The MD5 of the normalised URL (see `CacheKey.identify`).
    let identity: MD5.Digest
    /// The URL as given, with any password removed.
    let shown: String
    /// Nil when the batch was cancelled before the lookup (and once the batch has taken it).
    var plan: ImageLoader.Plan?
    /// How long the lookup took (seconds).
    let duration: Double
}

extension ImageLoader {
    /// Below this many URLs a chunk is looked up on one thread: a second
    /// task costs more than it saves.
    static let parallelChunkMinimum = 16
    /// URLs a thread takes from a chunk at a time (`PlanCursor`).
    static let planBlock = 8

    /// Looks up a chunk's URLs on two tasks (the cooperative pool's two
    /// threads), and returns them in input order. The tasks take the chunk
    /// `planBlock` URLs at a time from one cursor, not half each: when one
    /// thread is busy elsewhere (the consumer formatting the previous
    /// chunk's lines), the other takes more of the chunk, and neither waits
    /// for the other at the end of it. With fixed halves the consumer's work
    /// was not parallel at all: the half that waited for its thread behind
    /// it held up the whole chunk.
    ///
    /// Each URL is parsed once: validation, normalisation, key and identity
    /// come from the same pass. Without `lookUp` (the batch is cancelled) only
    /// the identity is computed, so that duplicates are still recognised.
    /// A URL whose identity is in `seen` (a duplicate of an earlier chunk's
    /// URL), or earlier among the URLs the same task took, is not looked up
    /// either; a duplicate the other task took is, and the batch drops the answer.
    ///
    /// The answer comes in parts (one per block), in input order: joining
    /// them would copy every answer.
    func planChunk(_ urls: [String], lookUp: Bool, seen: DigestSet) async -> [[PlannedURL]] {
        guard lookUp, urls.count >= Self.parallelChunkMinimum else {
            var mine = Set<MD5.Digest>(minimumCapacity: urls.count)
            return [planSlice(urls[...], lookUp: lookUp, seen: seen, mine: &mine)]
        }
        let cursor = PlanCursor(count: urls.count, block: Self.planBlock)
        async let other = planBlocks(urls, cursor: cursor, seen: seen)
        let mine = planBlocks(urls, cursor: cursor, seen: seen)
        return PlanCursor.inInputOrder(mine, await other)
    }

    /// Takes blocks of `urls` from `cursor` until none is left, and looks them up.
    private func planBlocks(_ urls: [String], cursor: PlanCursor, seen: DigestSet) -> [PlanCursor.Block] {
        var blocks: [PlanCursor.Block] = []
        var mine = Set<MD5.Digest>(minimumCapacity: urls.count)
        while let range = cursor.take() {
            blocks.append(PlanCursor.Block(start: range.lowerBound,
                                           planned: planSlice(urls[range], lookUp: true, seen: seen, mine: &mine)))
        }
        return blocks
    }

    /// `mine`: the identities looked up so far by this task (a URL among them is not looked up again).
    private func planSlice(_ urls: ArraySlice<String>, lookUp: Bool, seen: DigestSet,
                           mine: inout Set<MD5.Digest>) -> [PlannedURL] {
        var planned: [PlannedURL] = []
        planned.reserveCapacity(urls.count)
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
