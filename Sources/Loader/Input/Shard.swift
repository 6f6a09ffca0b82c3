import DiskCache

/// `--shard K/N`: this process takes only the URLs whose cache key falls in
/// shard K of N (0 ≤ K < N): the first 8 hex digits of the key (the MD5 of
/// the normalized URL) modulo N. The same on every machine, whatever the
/// order of the list, so N processes given the same list fetch each URL
/// exactly once. A URL that has no key (invalid) belongs to shard 0, which
/// reports it.
public struct Shard: Sendable, Equatable {
    public let index: Int
    public let count: Int

    public init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// `K/N`, as `--shard` takes it; nil unless 0 ≤ K < N.
    public init?(argument: String) {
        let parts = argument.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, k >= 0, k < n else { return nil }
        self.init(index: k, count: n)
    }

    /// What `init(argument:)` accepts, in words: for a message about a value it refused.
    public static let argumentForms = "give K/N, shard K of N counted from 0 (0 <= K < N: 0/4, 1/4, 2/4, 3/4)"

    public func contains(_ url: String) -> Bool {
        guard count > 1 else { return true }
        guard case .success(let key) = CacheKey.identify(url).key,
              let prefix = UInt32(key.hex.prefix(8), radix: 16) else { return index == 0 }
        return Int(prefix) % count == index   // count may pass UInt32.max: divide as Int
    }
}
