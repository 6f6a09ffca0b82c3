import DiskCache
import Support

extension ImageLoader {
    /// The network path with the remote tier in front of the origin: a local
    /// miss asks the tier first; an intact fresh object is the answer (source
    /// `remote`), a stale one is revalidated with the origin like a local
    /// entry. What the origin sends (a download, a 304) is then uploaded in
    /// the background, unless it must not be shared (`mayShare`).
    func tiered(url: String, key: CacheKey, entry: CacheEntry?) async -> Phase {
        guard let remote = options.remote else { return await network(url: url, key: key, entry: entry) }
        var base = entry
        if base == nil, case .stored(let fetched) = await remote.read(key, into: cache), varyMatches(fetched) {
            if !options.refresh, options.freshness.isFresh(fetched.metadata, now: currentUnixTime()) {
                return hitPhase(fetched, source: .remote)
            }
            base = fetched
        }
        let phase = await network(url: url, key: key, entry: base)
        if case .success(let result) = phase, result.source == .network || result.source == .revalidated,
           result.path != nil, mayShare(url) {
            if let stored = cache.lookup(key.hex, url: key.storedURL, accessTime: false), Self.shareable(stored.metadata) {
                remote.upload(key: key.hex, url: key.storedURL, from: cache)
            }
        }
        return phase
    }

    /// Whether a URL's responses may go to the shared tier: not when they were
    /// fetched with credentials (user info in the URL, an `Authorization` or
    /// `Cookie` header).
    func mayShare(_ url: String) -> Bool {
        if options.fetch.headers["Authorization"] != nil || options.fetch.headers["Cookie"] != nil { return false }
        return !Self.hasUserInfo(url)
    }

    /// Whether the URL's authority holds an `@` (user, or user:password).
    static func hasUserInfo(_ url: String) -> Bool {
        let bytes = Array(url.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else { return false }
        let authority = bytes[(colon + 3)...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        return authority.contains(UInt8(ascii: "@"))
    }

    /// A shared cache stores neither `no-store` nor `private` responses (RFC 9111 §5.2.2.5, §5.2.2.7).
    static func shareable(_ meta: CacheMetadata) -> Bool {
        for header in meta.headers where asciiCaseInsensitiveEqual(header.name, "Cache-Control") {
            for directive in CacheControl.directives(in: header.value) where directive.name == "no-store" || directive.name == "private" {
                return false
            }
        }
        return true
    }
}
