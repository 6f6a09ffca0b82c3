import DiskCache
import Fetch
import Support

/// RFC 9111 §4.1: a stored response whose `Vary` names request headers is
/// reused only for requests that send the same values for those headers,
/// compared after normalisation (`VaryNormalization`). A `VaryRequest` is
/// the request side: the headers this client sends.
public struct VaryRequest: Sendable {
    /// The request headers given (`-H`), and the `User-Agent` sent when none is
    /// ("": none is sent).
    public var headers: HTTPHeaders
    public var userAgent: String
    /// Headers not sent, not even libcurl's default (`-H 'Name:'`,
    /// `FetchConfiguration.removedHeaders`).
    public var removedHeaders: [String]

    public init(headers: HTTPHeaders, userAgent: String, removedHeaders: [String] = []) {
        self.headers = headers
        self.userAgent = userAgent
        self.removedHeaders = removedHeaders
    }

    /// The value sent for request header `name` in a request for `url` (the
    /// key's normalised URL), normalised: every line of that name combined,
    /// else "" when it is removed, else what is sent by default
    /// (`User-Agent`, libcurl's `Accept: */*`, Fetch's offer of content
    /// codings in `Accept-Encoding`, the URL's authority in `Host`), else ""
    /// (not sent). An empty value sent (`-H 'Name;'`) and no header are both
    /// "": the record keeps one value per name (RFC 9111 §4.1 would tell them
    /// apart; a server rarely does). A host is compared without case (RFC 9110 §4.2.3).
    public func value(_ name: String, url: String) -> String {
        let lines = headers.values(name)
        let lower = name.lowercased()
        if !lines.isEmpty {
            let value = VaryNormalization.normalize(lines.joined(separator: ","), name: name)
            return lower == "host" ? value.lowercased() : value
        }
        if removedHeaders.contains(where: { asciiCaseInsensitiveEqual($0, name) }) { return "" }
        switch lower {
        case "user-agent": return userAgent
        case "accept": return "*/*"
        case "accept-encoding": return Self.defaultAcceptEncoding
        case "host": return Self.authority(of: url)
        default: return ""
        }
    }

    /// The `Host` libcurl sends for `url`: its host and any port, without
    /// user info (lowercase: the URL is normalised, its default port dropped).
    static func authority(of url: String) -> String {
        guard let authority = urlAuthority(in: url) else { return "" }
        let host = authority.lastIndex(of: "@").map { authority[authority.index(after: $0)...] } ?? authority
        return host.lowercased()
    }

    /// The `Accept-Encoding` every request offers unless `-H` replaces it
    /// (`Fetch.Defaults.acceptEncoding`), normalised as a `Vary` compares it.
    static let defaultAcceptEncoding = VaryNormalization.normalize(Defaults.acceptEncoding, name: "accept-encoding")

    /// Request headers that carry credentials. A `Vary` naming one stores the
    /// MD5 of the value sent, never the value (docs/cache.md: passwords are
    /// never stored; `Authorization: Basic` is one in base64), and a later
    /// request matches by the same digest. It keeps no secret readable at
    /// rest; it is no defence against guessing a weak one.
    public static let credentialHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

    /// The value recorded for `name`: `value(name)`, or its digest for a
    /// credential header that was sent.
    func recorded(_ name: String, url: String) -> String {
        let sent = value(name, url: url)
        guard Self.credentialHeaders.contains(name), !sent.isEmpty else { return sent }
        return "md5 " + MD5.hex(sent)
    }

    /// The header names a `Vary` field value lists, lowercased.
    public static func names(_ vary: String) -> [String] {
        vary.split(separator: ",").map { trimWhitespaceLower($0) }.filter { !$0.isEmpty }
    }

    /// What to store beside a response to a request for `url` (the key's
    /// stored URL): the values this request sent for each header its `Vary`
    /// names (`*` is kept in `Vary` itself and never matches).
    public func values(for response: HTTPHeaders, url: String) -> [CacheMetadata.Header] {
        guard let vary = response.combined("Vary") else { return [] }
        return Self.names(vary).filter { $0 != "*" }.map { CacheMetadata.Header($0, recorded($0, url: url)) }
    }

    /// Whether a stored response may answer this request: every header its
    /// `Vary` names has the stored value now (both normalised), or, for
    /// `Accept-Language`, the request's first choice is the stored response's
    /// `Content-Language` (the language the server would select). `Vary: *`
    /// never matches.
    public func matches(_ stored: CacheMetadata) -> Bool {
        Self.varyNames(stored).allSatisfy { matches(stored, on: $0) }
    }

    /// The names (lowercased) of the headers `stored`'s `Vary` lists that this
    /// request sends differently, `*` for `Vary: *`; empty when it matches.
    /// What a miss says (`--offline`: stored, but for other request headers).
    public func mismatches(_ stored: CacheMetadata) -> [String] {
        Self.varyNames(stored).filter { !matches(stored, on: $0) }
    }

    /// The header names (lowercased) of all of `stored`'s `Vary` fields; none without one.
    private static func varyNames(_ stored: CacheMetadata) -> [String] {
        let fields = stored.headers.filter { $0.name.lowercased() == "vary" }
        guard !fields.isEmpty else { return [] }
        return names(fields.map(\.value).joined(separator: ","))
    }

    /// Whether this request's header `name` (lowercased) is what `stored` was
    /// selected by (`matches`).
    private func matches(_ stored: CacheMetadata, on name: String) -> Bool {
        if name == "*" { return false }
        let then = stored.varyRequest.first { $0.name.lowercased() == name }?.value ?? ""
        if Self.credentialHeaders.contains(name) { return recorded(name, url: stored.url) == then }
        let now = value(name, url: stored.url)
        if now == VaryNormalization.normalize(then, name: name) { return true }
        if name == "accept-language", let language = stored.header("Content-Language"),
           VaryNormalization.firstChoice(ofAcceptLanguage: now, is: language) { return true }
        return false
    }
}
