import DiskCache
import Fetch

/// What may go to the shared remote tier (`--remote-cache`): a shared cache
/// must never hand one user's response to another.
public enum TierSharing {
    /// Whether a URL's responses may go to the shared tier: not when they were
    /// fetched with credentials (user info in the URL, an `Authorization` or
    /// `Cookie` request header).
    public static func mayShare(url: String, requestHeaders: HTTPHeaders) -> Bool {
        if requestHeaders["Authorization"] != nil || requestHeaders["Cookie"] != nil { return false }
        return !hasUserInfo(url)
    }

    /// Whether the URL's authority holds an `@` (user, or user:password).
    public static func hasUserInfo(_ url: String) -> Bool {
        let bytes = Array(url.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else { return false }
        let authority = bytes[(colon + 3)...].prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        return authority.contains(UInt8(ascii: "@"))
    }

    /// A shared cache stores neither `no-store` nor `private` responses (RFC 9111 §5.2.2.5, §5.2.2.7).
    public static func shareable(_ stored: CacheMetadata) -> Bool {
        let cc = Freshness.cacheControl(stored)
        return !cc.noStore && !cc.isPrivate
    }
}
