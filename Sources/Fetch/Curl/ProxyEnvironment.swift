import Support
#if canImport(Glibc)
import Glibc
#endif

/// The environment variables libcurl 7.88 may read to choose a proxy for an
/// http or https URL, or to go without one: `<scheme>_proxy` (for https also
/// in capitals; never `HTTP_PROXY`), `all_proxy`, `no_proxy`, each also in
/// capitals. `FetchClient` asks once (`FetchConfiguration.environmentNamesProxy`).
public enum ProxyEnvironment {
    private static let variables = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                                    "no_proxy", "NO_PROXY"]

    /// Whether any of them is set (an empty value counts: libcurl reads it too).
    static func namesProxy() -> Bool {
        variables.contains { getenv($0) != nil }
    }

    /// The proxy libcurl 7.88 goes through for `url`, as its variable names
    /// it, without user name or password (`http://proxy.internal:3128
    /// (http_proxy)`), or nil when it goes direct: libcurl's own choice
    /// (`detect_proxy` and `Curl_check_noproxy` in its `url.c` and
    /// `noproxy.c`), so that a failure to connect can say it was the
    /// proxy's. An empty variable is one not set, as libcurl's `curl_getenv`
    /// reads it. `environment` stands in for the process's (tests).
    public static func proxy(for url: String, environment: [String: String]? = nil) -> String? {
        func value(_ name: String) -> String? {
            let text = environment.map { $0[name] } ?? getenv(name).map { String(cString: $0) }
            return text?.isEmpty == false ? text : nil
        }
        guard let separator = schemeSeparator(in: url), let authority = urlAuthority(in: url) else { return nil }
        let scheme = url[..<separator.lowerBound].lowercased()
        let host = hostName(inAuthority: authority)
        if let noProxy = value("no_proxy") ?? value("NO_PROXY"), excludes(noProxy, host: host) { return nil }
        let own = scheme + "_proxy"
        var named: (name: String, value: String)?
        if let proxy = value(own) { named = (own, proxy) }
        else if scheme != "http", let proxy = value(own.uppercased()) { named = (own.uppercased(), proxy) }   // never HTTP_PROXY (CGI)
        else if let proxy = value("all_proxy") { named = ("all_proxy", proxy) }
        else if let proxy = value("ALL_PROXY") { named = ("ALL_PROXY", proxy) }
        guard let named else { return nil }
        return "\(withoutUserInfo(named.value)) (\(named.name))"
    }

    /// A proxy variable's value without what precedes its last `@`, wherever that is: a password
    /// with a `/`, `?` or `#` left unencoded (`http://u:p#ss@p:1`) is not a URL libcurl can read
    /// (it fails as a proxy name that does not resolve), and its authority would end too early for
    /// `urlWithoutUserInfo`. A proxy's own value has no `@` but in its user info.
    static func withoutUserInfo(_ value: String) -> String {
        let start = schemeSeparator(in: value)?.upperBound ?? value.startIndex
        guard let at = value[start...].lastIndex(of: "@") else { return value }
        return String(value[..<start]) + String(value[value.index(after: at)...])
    }

    /// Whether a `no_proxy` list names `host`: `*`, or an entry equal to it
    /// or to a domain it is in (a leading dot optional), compared without case.
    /// An address is named only by itself or by a range that holds it
    /// (`10.0.0.0/8`), never as a domain (`3.4` does not name 10.2.3.4), and
    /// an IPv6 entry may come in brackets, as libcurl's `Curl_check_noproxy` reads them.
    static func excludes(_ list: String, host: String) -> Bool {
        let trimmedList = trimWhitespace(list)
        if trimmedList == "*" { return true }
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        let isAddress = ipv4(Substring(name)) != nil || name.contains(":")
        for entry in trimmedList.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            var token = entry.lowercased()
            if token.hasPrefix("["), token.hasSuffix("]") { token = String(token.dropFirst().dropLast()) }
            if token.hasPrefix(".") { token.removeFirst() }
            if token.hasSuffix(".") { token.removeLast() }
            guard !token.isEmpty else { continue }
            if name == token || (!isAddress && name.hasSuffix("." + token)) { return true }
            if token.contains("/"), cidr(token, contains: name) { return true }
        }
        return false
    }

    /// An IPv4 `a.b.c.d/bits` entry that holds `name`, an IPv4 address.
    private static func cidr(_ token: String, contains name: String) -> Bool {
        let parts = token.split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let bits = UInt32(parts[1]), bits <= 32,
              let network = ipv4(parts[0]), let address = ipv4(Substring(name)) else { return false }
        let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
        return network & mask == address & mask
    }

    private static func ipv4(_ text: Substring) -> UInt32? {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4 else { return nil }
        var value: UInt32 = 0
        for octet in octets {
            guard let byte = UInt8(octet) else { return nil }
            value = value << 8 | UInt32(byte)
        }
        return value
    }

    /// The host of an authority: no user info, no port, no IPv6 brackets.
    private static func hostName(inAuthority authority: Substring) -> String {
        var rest = authority
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            return String(rest[rest.index(after: rest.startIndex)..<close])
        }
        return String(rest.prefix { $0 != ":" })
    }
}
