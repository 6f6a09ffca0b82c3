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

    /// The key of a normalised URL (`CacheKey.normalizedURL`); nil when it
    /// has no `scheme://host`.
    public init?(normalizedURL url: String) {
        let bytes = url.utf8
        guard let colon = bytes.firstIndex(of: 0x3A) else { return nil }
        let rest = bytes[colon...].dropFirst()
        guard rest.starts(with: [0x2F, 0x2F]) else { return nil }
        let authorityStart = rest.index(rest.startIndex, offsetBy: 2)
        let tail = bytes[authorityStart...]
        let authorityEnd = tail.firstIndex { $0 == 0x2F || $0 == 0x3F || $0 == 0x23 } ?? bytes.endIndex
        let authority = bytes[authorityStart..<authorityEnd]
        let hostStart = authority.lastIndex(of: 0x40).map { bytes.index(after: $0) } ?? authorityStart
        guard hostStart < authorityEnd else { return nil }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self)
        let host = String(decoding: bytes[hostStart..<authorityEnd], as: UTF8.self)
        self.init(origin: scheme + "://" + host, name: host)
    }

    public var description: String { name }
}
