import DiskCache
import Fetch

/// `cache pull`: entries brought from the tier into the local cache, without
/// contacting any origin.
extension RemoteCache {
    /// What `pull` did with one URL.
    public enum PullOutcome: Sendable, Equatable {
        /// An intact object is now stored locally.
        case pulled
        /// The local cache already held a body for it; the tier was not asked.
        case present
        /// Not pulled: the tier does not have it (or the URL is one a fetch
        /// refuses, which no cache holds: the tier is not asked).
        case missing
        /// Not pulled: the tier could not be used (an error, a rejected
        /// object, or the tier turned off after failures in a row).
        /// `turnedOff`: the tier was turned off for the run when this URL's
        /// read ended (`Read.unavailable`); false when its own read failed
        /// while the tier was still on.
        case failed(turnedOff: Bool)
    }

    /// How many URLs ended each way.
    public struct PullCounts: Sendable, Equatable {
        public var pulled = 0
        public var present = 0
        public var missing = 0
        public var failed = 0

        public init(pulled: Int = 0, present: Int = 0, missing: Int = 0, failed: Int = 0) {
            self.pulled = pulled
            self.present = present
            self.missing = missing
            self.failed = failed
        }

        /// URLs not cached locally after the pull.
        public var notPulled: Int { missing + failed }
    }

    /// Pulls each URL of `urls` into `store`, at most `jobs` at once, and
    /// calls `each` with every URL's outcome (in completion order, one call at
    /// a time). URLs already cached locally are left alone. Each object is
    /// checked (key, URL, length, XXH3-128) before it is stored (`read`).
    public func pull<URLs: AsyncSequence>(
        _ urls: URLs, into store: DiskCacheStore, jobs: Int,
        each: (String, PullOutcome) -> Void = { _, _ in }
    ) async -> PullCounts where URLs.Element == String, URLs.Failure == Never {
        var counts = PullCounts()
        func record(_ url: String, _ outcome: PullOutcome) {
            switch outcome {
            case .pulled: counts.pulled += 1
            case .present: counts.present += 1
            case .missing: counts.missing += 1
            case .failed: counts.failed += 1
            }
            each(url, outcome)
        }
        await withTaskGroup(of: (String, PullOutcome).self) { group in
            var running = 0
            for await url in urls {
                if running >= max(1, jobs), let done = await group.next() {
                    running -= 1
                    record(done.0, done.1)
                }
                running += 1
                group.addTask { (url, await self.pullOne(url, into: store)) }
            }
            for await done in group { record(done.0, done.1) }
        }
        return counts
    }

    private func pullOne(_ url: String, into store: DiskCacheStore) async -> PullOutcome {
        guard (try? FetchClient.validate(url)) != nil, let key = try? CacheKey(url: url) else { return .missing }
        if let entry = store.lookup(key.hex, url: key.storedURL, accessTime: false), entry.metadata.hasBody { return .present }
        switch await read(key, into: store) {
        case .stored: return .pulled
        case .absent: return .missing
        case .unavailable(let turnedOff): return .failed(turnedOff: turnedOff)
        }
    }
}
