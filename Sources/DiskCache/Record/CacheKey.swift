#if canImport(Glibc)
import Glibc
#endif
import func Support.withUTF8Bytes

/// The cache key of a URL: the lowercase hex MD5 of its normalised form
/// (SPEC §4). Normalising lowercases the scheme and host, drops a default
/// port and the fragment, and changes nothing else, so for a URL already in
/// that form the key equals `printf %s "$URL" | md5sum`.
public struct CacheKey: Sendable, Hashable, CustomStringConvertible {
    public let normalizedURL: String
    /// The MD5 of `normalizedURL`: the key itself. A lookup names the
    /// entry's file from it with no string made (`MD5.Digest.withHex`).
    public let digest: MD5.Digest

    /// The key as text: 32 lowercase hex digits, the entry's file name.
    public var hex: String { digest.hex }

    public init(url: String) throws(DiskCacheError) {
        normalizedURL = try Self.normalize(url)
        digest = MD5.digest(normalizedURL)
    }

    init(normalizedURL: String, digest: MD5.Digest) {
        self.normalizedURL = normalizedURL
        self.digest = digest
    }

    public var description: String { hex }

    /// The URL as an entry's metadata records it: `normalizedURL` without
    /// any password (`http://user:secret@host/a` → `http://user@host/a`).
    /// The key still hashes the whole normalised URL, so two users' (or two
    /// passwords') entries never share a file; no secret is kept at rest.
    public var storedURL: String { Self.removingPassword(normalizedURL) }

    /// `url` as an entry's record keeps it: normalised, without any password
    /// (what `storedURL` gives for its key); text that is not an absolute
    /// URL, unchanged. Two byte scans and no copy for a URL already in
    /// that form (every record the loader writes).
    static func recordedURL(_ url: String) -> String {
        guard let normalized = try? normalize(url) else { return url }
        return removingPassword(normalized)
    }

    /// `url` without the password of its user info, if it has one.
    public static func removingPassword(_ url: String) -> String {
        // Every lookup asks (`storedURL`): read the bytes in place, and copy
        // them only when there is a password to cut out.
        withUTF8Bytes(of: url) { passwordRange($0) }.map { cut in
            var bytes = Array(url.utf8)
            bytes.removeSubrange(cut)
            return String(decoding: bytes, as: UTF8.self)
        } ?? url
    }

    /// The bytes `removingPassword` removes (the password and its `:`), if any.
    private static func passwordRange(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        // No '@' at all (nearly every URL): no user info, one memchr.
        guard let base = bytes.baseAddress, memchr(base, 0x40, bytes.count) != nil else { return nil }
        var start = 0
        while start + 2 < bytes.count && !(bytes[start] == 0x3A && bytes[start + 1] == 0x2F && bytes[start + 2] == 0x2F) {
            start += 1
        }
        guard start + 2 < bytes.count else { return nil }
        start += 3
        var end = start   // the authority ends at '/', '?' or '#'
        while end < bytes.count && bytes[end] != 0x2F && bytes[end] != 0x3F && bytes[end] != 0x23 { end += 1 }
        guard let at = bytes[start..<end].lastIndex(of: 0x40),
              let colon = bytes[start..<at].firstIndex(of: 0x3A) else { return nil }
        return colon..<at
    }

    /// Normalises once and hashes once: the key (or why the URL has none),
    /// and the MD5 of the normalised form — of the text itself when it does
    /// not normalise — which identifies the URL (a batch's duplicates share
    /// it; so do URLs that share a cache entry).
    public static func identify(_ url: String) -> (key: Result<CacheKey, DiskCacheError>, identity: MD5.Digest) {
        do {
            let normalized = try normalize(url)
            let digest = MD5.digest(normalized)
            return (.success(CacheKey(normalizedURL: normalized, digest: digest)), digest)
        } catch {
            return (.failure(error), MD5.digest(url))
        }
    }

    public static func normalize(_ url: String) throws(DiskCacheError) -> String {
        if isNormalized(url) { return url }
        return try normalizeFully(url)
    }

    /// The full normalisation (see the type's comment), building a new string.
    /// It splits the URL at its ASCII delimiters byte by byte, as URL
    /// validation and libcurl do: a `Character` search would miss a "/"
    /// followed by a combining mark ("/\u{33F}"), take part of the path for
    /// the host and lowercase it (found by the `url` fuzz target).
    static func normalizeFully(_ url: String) throws(DiskCacheError) -> String {
        let b = Array(url.utf8)
        func text(_ range: Range<Int>) -> String { String(decoding: b[range], as: UTF8.self) }
        func invalid(_ message: String) -> DiskCacheError { DiskCacheError(.invalidURL, path: "", message: message) }
        guard let colon = b.firstIndex(of: 0x3A), colon > 0, b.count - colon >= 3, b[colon + 1] == 0x2F, b[colon + 2] == 0x2F
        else { throw invalid("not an absolute URL (expected scheme://host/…)") }
        let scheme = text(0..<colon).lowercased()
        let restStart = colon + 3
        let restEnd = b[restStart...].firstIndex(of: 0x23) ?? b.count                     // '#': the fragment goes
        let authorityEnd = b[restStart..<restEnd].firstIndex { $0 == 0x2F || $0 == 0x3F } ?? restEnd
        let hostStart = b[restStart..<authorityEnd].lastIndex(of: 0x40).map { $0 + 1 } ?? restStart   // after '@'
        var hostEnd = authorityEnd
        var port = authorityEnd..<authorityEnd
        if hostStart < authorityEnd && b[hostStart] == 0x5B {                                // '[' IPv6 ']'
            guard let close = b[hostStart..<authorityEnd].firstIndex(of: 0x5D) else { throw invalid("unterminated IPv6 address") }
            hostEnd = close + 1
            if hostEnd < authorityEnd {
                guard b[hostEnd] == 0x3A else { throw invalid("malformed host") }
                port = (hostEnd + 1)..<authorityEnd
            }
        } else if let portColon = b[hostStart..<authorityEnd].lastIndex(of: 0x3A) {
            hostEnd = portColon
            port = (portColon + 1)..<authorityEnd
        }
        guard hostEnd > hostStart else { throw invalid("no host") }
        guard b[port].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { throw invalid("malformed port '\(text(port))'") }
        let defaultPort = scheme == "http" ? "80" : scheme == "https" ? "443" : nil
        var normalized = scheme + "://" + text(restStart..<hostStart) + text(hostStart..<hostEnd).lowercased()
        // The port's value decides, as for libcurl: ":080" is port 80, the default, and goes too.
        let portValue = String(text(port).drop { $0 == "0" })
        if !port.isEmpty && portValue != defaultPort { normalized += ":" + text(port) }
        normalized += text(authorityEnd..<restEnd)
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
        // One pass over the authority: where it ends, its last '@' and last ':', and its last byte
        // that cannot be in a normalised host (uppercase, non-ASCII). Such a byte before the host
        // is the user info's (kept as it is); in the port it fails the port's check as well.
        var authorityEnd = i + 3
        var lastAt = -1, lastColon = -1, lastUnfit = -1
        while authorityEnd < n {
            let byte = b[authorityEnd]
            if byte == 0x2F || byte == 0x3F { break }                   // '/', '?'
            if byte == 0x23 { return false }                            // '#': a fragment to drop
            if byte == 0x40 {
                lastAt = authorityEnd
            } else if byte == 0x3A {
                lastColon = authorityEnd
            } else if byte >= 0x80 || (byte >= 0x41 && byte <= 0x5A) {
                lastUnfit = authorityEnd
            }
            authorityEnd += 1
        }
        if let base = b.baseAddress, authorityEnd < n,                  // a fragment to drop
           memchr(base + authorityEnd, 0x23, n - authorityEnd) != nil { return false }
        let hostStart = lastAt >= 0 ? lastAt + 1 : i + 3                // after the last '@'
        guard hostStart < authorityEnd, b[hostStart] != 0x5B else { return false }  // empty host, IPv6
        let hostEnd = lastColon >= hostStart ? lastColon : authorityEnd            // the last ':'
        guard hostEnd > hostStart, lastUnfit < hostStart else { return false }
        if hostEnd < authorityEnd {
            let port = UnsafeBufferPointer(rebasing: b[(hostEnd + 1)..<authorityEnd])
            // A leading zero ("080") may spell the default port: the full path decides.
            guard !port.isEmpty, port[0] != 0x30, port.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return false }
            let scheme = UnsafeBufferPointer(rebasing: b[0..<schemeEnd])
            // Byte compares: the generic `elementsEqual` over a String's
            // UTF-8 view was a visible share of every URL with a port.
            func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
                bytes.elementsEqual(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
            }
            // The lengths first: almost every port is neither "80" nor "443".
            if port.count == 2 && scheme.count == 4 && equals(scheme, "http") && equals(port, "80") { return false }
            if port.count == 3 && scheme.count == 5 && equals(scheme, "https") && equals(port, "443") { return false }
        }
        return true
    }
}
