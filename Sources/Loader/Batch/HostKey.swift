/// What counts as one host for scheduling: the scheme, host and port of the
/// normalised URL (`https://img.example.com`, `http://127.0.0.2:8080`).
/// User info is left out: two users of one server share its limits.
///
/// A URL is scheduled under the host it is listed with. A redirect to
/// another host is followed inside the same transfer, so it runs in the
/// listed host's slot; libcurl's own per-host connection limit
/// (`CURLMOPT_MAX_HOST_CONNECTIONS`) still bounds the connections to the
/// target. Scheduling by the target instead would need the answer before
/// the request.
public struct HostKey: Hashable, Sendable, CustomStringConvertible {
    /// `scheme://host[:port]`, the default port left out (as normalised).
    public let origin: String
    /// The host as messages name it: `img.example.com`, with a port when
    /// it is not the scheme's default.
    public let name: String
    /// `origin`'s hash, computed once per key: the scheduler looks a URL's
    /// host up several times per URL (queue, reports, end), and hashing the
    /// strings each time was a SipHash over both per look-up (issue 22).
    private let originHash: Int

    public init(origin: String, name: String) {
        self.origin = origin
        self.name = name
        originHash = origin.hashValue
    }

    public static func == (lhs: HostKey, rhs: HostKey) -> Bool {
        lhs.originHash == rhs.originHash && lhs.origin == rhs.origin && lhs.name == rhs.name
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(originHash) }

    /// What the scheduler's dictionaries use (7 look-ups per URL): `originHash`
    /// is a SipHash of the origin already, so it is only mixed with the
    /// table's seed, not put through a second SipHash (`Hasher`) per look-up,
    /// as `MD5.Digest` does. Equal keys have equal `originHash`, so equal hashes.
    public func _rawHashValue(seed: Int) -> Int {
        let mixed = UInt64(UInt(bitPattern: originHash ^ seed)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed ^ (mixed >> 29))
    }

    /// The key of a normalised URL (`CacheKey.normalizedURL`); nil when it
    /// has no `scheme://host`. Once per URL: the bytes are read in place, and
    /// without user info the origin is the URL's own prefix (no concatenation).
    public init?(normalizedURL url: String) {
        let found = url.utf8.withContiguousStorageIfAvailable(Self.bounds) ?? Array(url.utf8).withUnsafeBufferPointer(Self.bounds)
        guard let found else { return nil }
        // Every bound is at an ASCII byte (":", "@", "/", "?", "#" or the end), so on a character boundary.
        let utf8 = url.utf8
        let colon = utf8.index(utf8.startIndex, offsetBy: found.colon)
        let hostStart = utf8.index(colon, offsetBy: found.hostStart - found.colon)
        let end = utf8.index(hostStart, offsetBy: found.end - found.hostStart)
        let host = String(url[hostStart..<end])
        let origin = found.hostStart == found.colon + 3 ? String(url[..<end]) : url[..<colon] + "://" + host
        self.init(origin: origin, name: host)
    }

    /// `HostKey(normalizedURL: url)`, or `previous` itself when `url` is of its
    /// origin: `previous.origin` then `/`, `?`, `#` or the end (so no user info,
    /// no other port, and the same host to the byte). A batch's URLs mostly share
    /// a host: made anew, a key cost two strings and a SipHash of the origin
    /// (~2 k instructions a URL); compared, one scan of the origin's bytes.
    public static func of(normalizedURL url: String, reusing previous: HostKey?) -> HostKey? {
        if let previous, url.utf8.withContiguousStorageIfAvailable({ previous.isOrigin(of: $0) }) == true { return previous }
        return HostKey(normalizedURL: url)
    }

    /// Whether `url` (its bytes) begins with `origin`, followed by `/`, `?`, `#` or nothing.
    private func isOrigin(of url: UnsafeBufferPointer<UInt8>) -> Bool {
        origin.utf8.withContiguousStorageIfAvailable { own in
            guard url.count >= own.count, own.count > 0 else { return false }
            for i in 0..<own.count where url[i] != own[i] { return false }
            guard url.count > own.count else { return true }
            let next = url[own.count]
            return next == 0x2F || next == 0x3F || next == 0x23
        } ?? false
    }

    /// Byte offsets in a URL: its scheme's colon, and its host[:port] after any user info.
    private static func bounds(_ bytes: UnsafeBufferPointer<UInt8>) -> (colon: Int, hostStart: Int, end: Int)? {
        guard let colon = bytes.firstIndex(of: 0x3A), colon + 2 < bytes.count,
              bytes[colon + 1] == 0x2F, bytes[colon + 2] == 0x2F else { return nil }
        let authorityStart = colon + 3
        var end = authorityStart
        while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 { end += 1 }
        var hostStart = authorityStart
        var i = end
        while i > authorityStart {
            i -= 1
            if bytes[i] == 0x40 { hostStart = i + 1; break }
        }
        guard hostStart < end else { return nil }
        return (colon, hostStart, end)
    }

    public var description: String { name }
}
