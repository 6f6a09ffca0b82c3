/// The cache key of a URL: the lowercase hex MD5 of its normalised form
/// (SPEC §4). Normalising lowercases the scheme and host, drops a default
/// port and the fragment, and changes nothing else, so for a URL already in
/// that form the key equals `printf %s "$URL" | md5sum`.
public struct CacheKey: Sendable, Hashable, CustomStringConvertible {
    public let normalizedURL: String
    public let hex: String

    public init(url: String) throws(DiskCacheError) {
        normalizedURL = try Self.normalize(url)
        hex = MD5.hex(normalizedURL)
    }

    public var description: String { hex }

    public static func normalize(_ url: String) throws(DiskCacheError) -> String {
        guard let colon = url.firstIndex(of: ":"), colon > url.startIndex, url[colon...].hasPrefix("://") else {
            throw DiskCacheError(.invalidURL, path: "", message: "not an absolute URL (expected scheme://host/…)")
        }
        let scheme = url[..<colon].lowercased()
        var rest = url[url.index(colon, offsetBy: 3)...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let tail = rest[authorityEnd...]
        var userinfo = ""
        var hostPort = authority
        if let at = authority.lastIndex(of: "@") {
            userinfo = String(authority[...at])
            hostPort = authority[authority.index(after: at)...]
        }
        var host = hostPort
        var port: Substring = ""
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else {
                throw DiskCacheError(.invalidURL, path: "", message: "unterminated IPv6 address")
            }
            host = hostPort[...close]
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") { port = after.dropFirst() } else if !after.isEmpty {
                throw DiskCacheError(.invalidURL, path: "", message: "malformed host")
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<colon]
            port = hostPort[hostPort.index(after: colon)...]
        }
        guard !host.isEmpty else { throw DiskCacheError(.invalidURL, path: "", message: "no host") }
        guard port.allSatisfy(\.isASCII) && port.allSatisfy(\.isNumber) else {
            throw DiskCacheError(.invalidURL, path: "", message: "malformed port '\(port)'")
        }
        let defaultPort = scheme == "http" ? "80" : scheme == "https" ? "443" : nil
        var normalized = scheme + "://" + userinfo + host.lowercased()
        if !port.isEmpty && String(port) != defaultPort { normalized += ":" + port }
        normalized += tail
        return normalized
    }
}
