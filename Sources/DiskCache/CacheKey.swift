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

    init(normalizedURL: String, hex: String) {
        self.normalizedURL = normalizedURL
        self.hex = hex
    }

    public var description: String { hex }

    /// The URL as an entry's metadata records it: `normalizedURL` without
    /// any password (`http://user:secret@host/a` → `http://user@host/a`).
    /// The key still hashes the whole normalised URL, so two users' (or two
    /// passwords') entries never share a file; no secret is kept at rest.
    public var storedURL: String { Self.removingPassword(normalizedURL) }

    /// `url` without the password of its user info, if it has one.
    public static func removingPassword(_ url: String) -> String {
        let bytes = Array(url.utf8)
        var start = 0
        while start + 2 < bytes.count && !(bytes[start] == 0x3A && bytes[start + 1] == 0x2F && bytes[start + 2] == 0x2F) {
            start += 1
        }
        guard start + 2 < bytes.count else { return url }
        start += 3
        var end = start   // the authority ends at '/', '?' or '#'
        while end < bytes.count && bytes[end] != 0x2F && bytes[end] != 0x3F && bytes[end] != 0x23 { end += 1 }
        guard let at = bytes[start..<end].lastIndex(of: 0x40),
              let colon = bytes[start..<at].firstIndex(of: 0x3A) else { return url }
        return String(decoding: bytes[..<colon] + bytes[at...], as: UTF8.self)
    }

    /// Normalises once and hashes once: the key (or why the URL has none),
    /// and the MD5 of the normalised form — of the text itself when it does
    /// not normalise — which identifies the URL (a batch's duplicates share
    /// it; so do URLs that share a cache entry).
    public static func identify(_ url: String) -> (key: Result<CacheKey, DiskCacheError>, identity: MD5.Digest) {
        do {
            let normalized = try normalize(url)
            let digest = MD5.digest(normalized)
            return (.success(CacheKey(normalizedURL: normalized, hex: digest.hex)), digest)
        } catch {
            return (.failure(error), MD5.digest(url))
        }
    }

    public static func normalize(_ url: String) throws(DiskCacheError) -> String {
        if isNormalized(url) { return url }
        return try normalizeFully(url)
    }

    /// The full normalisation (see the type's comment), building a new string.
    static func normalizeFully(_ url: String) throws(DiskCacheError) -> String {
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

    /// True when `normalize` would return `url` unchanged (the usual case: a
    /// URL with a lowercase scheme and host, no default port, no fragment).
    /// A byte scan with no allocation; anything unusual (IPv6 literals,
    /// non-ASCII hosts) answers false and takes the full path.
    static func isNormalized(_ url: String) -> Bool {
        // Borrowed bytes (no copy, no retain) for a native string, else a copy.
        if let answer = url.utf8.withContiguousStorageIfAvailable({ isNormalized($0) }) { return answer }
        var url = url
        return url.withUTF8 { isNormalized($0) }
    }

    private static func isNormalized(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = b.count
        var i = 0
        while i < n && b[i] != 0x3A {                          // scheme up to ':'
            guard b[i] < 0x80, !(b[i] >= 0x41 && b[i] <= 0x5A), b[i] != 0x23 else { return false }
            i += 1
        }
        guard i > 0, i + 2 < n, b[i + 1] == 0x2F, b[i + 2] == 0x2F else { return false }
        let schemeEnd = i
        var authorityEnd = i + 3
        while authorityEnd < n && b[authorityEnd] != 0x2F && b[authorityEnd] != 0x3F {
            guard b[authorityEnd] != 0x23 else { return false }
            authorityEnd += 1
        }
        for k in authorityEnd..<n where b[k] == 0x23 { return false }   // a fragment to drop
        var hostStart = i + 3
        for k in hostStart..<authorityEnd where b[k] == 0x40 { hostStart = k + 1 }   // after the last '@'
        guard hostStart < authorityEnd, b[hostStart] != 0x5B else { return false }  // empty host, IPv6
        var hostEnd = authorityEnd
        for k in hostStart..<authorityEnd where b[k] == 0x3A { hostEnd = k }       // the last ':'
        guard hostEnd > hostStart else { return false }
        for k in hostStart..<hostEnd {
            guard b[k] < 0x80, !(b[k] >= 0x41 && b[k] <= 0x5A) else { return false }
        }
        if hostEnd < authorityEnd {
            let port = UnsafeBufferPointer(rebasing: b[(hostEnd + 1)..<authorityEnd])
            guard !port.isEmpty, port.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
            let scheme = UnsafeBufferPointer(rebasing: b[0..<schemeEnd])
            // Byte compares: the generic `elementsEqual` over a String's
            // UTF-8 view was a visible share of every URL with a port.
            func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
                bytes.elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
            }
            if equals(scheme, "http") && equals(port, "80") { return false }
            if equals(scheme, "https") && equals(port, "443") { return false }
        }
        return true
    }
}
