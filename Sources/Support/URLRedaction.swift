#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Removes the password from a URL's userinfo (`https://user:secret@host/`
/// becomes `https://user:***@host/`), so that no output ever shows it.
///
/// Runs for every transfer, so it scans UTF-8 bytes: a URL without `@`
/// (nearly all of them) is returned as is after one pass.
public func redactURL(_ url: String) -> String {
    let bytes = url.utf8
    // In place for a native string, by `memchr`: the generic `contains` was a visible share of a
    // batch of cache hits, and its byte loop (~6 instructions a byte) ~170 instructions per cold URL, twice.
    let hasAt = bytes.withContiguousStorageIfAvailable { text in
        text.baseAddress.map { memchr($0, 0x40, text.count) != nil } ?? false
    } ?? bytes.contains(UInt8(ascii: "@"))
    guard hasAt, let schemeEnd = schemeSeparator(in: url) else { return url }
    let afterScheme = bytes[schemeEnd.upperBound...]
    let authorityEnd = afterScheme.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
        ?? bytes.endIndex
    let authority = bytes[schemeEnd.upperBound..<authorityEnd]
    guard let at = authority.lastIndex(of: UInt8(ascii: "@")) else { return url }
    guard let colon = bytes[schemeEnd.upperBound..<at].firstIndex(of: UInt8(ascii: ":")) else { return url }
    return String(url[..<colon]) + ":***" + String(url[at...])
}

/// `url` (or a bare `host:port`, as an environment variable may give an
/// endpoint or a proxy) without its user name and password: what precedes
/// the last `@` of the authority goes, scheme or none (`u:pw@h:1/x`
/// becomes `h:1/x`). For a location shown in a message, where `redactURL`
/// would leave a password in a scheme-less value.
public func urlWithoutUserInfo(_ url: String) -> String {
    let start = schemeSeparator(in: url)?.upperBound ?? url.startIndex
    let authorityEnd = url[start...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
    guard let at = url[start..<authorityEnd].lastIndex(of: "@") else { return url }
    return String(url[..<start]) + String(url[url.index(after: at)...])
}

/// The authority of `url`: what follows its "://" up to the first `/`, `?`
/// or `#` (user info, host and port). Nil without a "://" (`schemeSeparator`).
public func urlAuthority(in url: String) -> Substring? {
    guard let scheme = schemeSeparator(in: url) else { return nil }
    return url[scheme.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
}

/// The range of the first "://" in `url`, found without Foundation. Nil when
/// a `/`, `?` or `#` comes first, or the first `:` is not followed by `//`.
public func schemeSeparator(in url: String) -> Range<String.Index>? {
    let bytes = url.utf8
    var index = bytes.startIndex
    while index < bytes.endIndex {
        switch bytes[index] {
        case UInt8(ascii: ":"):
            let first = bytes.index(after: index)
            guard first < bytes.endIndex, bytes[first] == UInt8(ascii: "/") else { return nil }
            let second = bytes.index(after: first)
            guard second < bytes.endIndex, bytes[second] == UInt8(ascii: "/") else { return nil }
            return index..<bytes.index(after: second)
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"):
            return nil
        default:
            index = bytes.index(after: index)
        }
    }
    return nil
}
