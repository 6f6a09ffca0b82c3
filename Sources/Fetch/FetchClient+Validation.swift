import Support

/// URL checks made before any I/O (SPEC §5): only http and https, a host,
/// a valid port; nothing else reaches libcurl.
extension FetchClient {
    /// Rejects what must never reach the network: malformed URLs and schemes
    /// other than http and https (SPEC §5: before any I/O). No request was
    /// made, so the error counts no attempts.
    public static func validate(_ url: String) throws(FetchError) {
        if isPlainlyValid(url) { return }
        try validateFully(url)
    }

    /// `validate` without the fast path: every check, each with its error.
    static func validateFully(_ url: String) throws(FetchError) {
        guard !url.isEmpty else { throw FetchError(.invalidURL, url: url, detail: "the URL is empty", attempts: 0) }
        guard let schemeEnd = schemeSeparator(in: url) else {
            // "mailto:…", "data:…": a scheme, only not one that is fetched. ("host:8080/x" is no scheme.)
            if let scheme = leadingScheme(url), !equalsIgnoringASCIICase(scheme.utf8, "http"),
               !equalsIgnoringASCIICase(scheme.utf8, "https") {
                throw FetchError(.unsupportedScheme, url: url, detail: "'\(scheme.lowercased())'", attempts: 0)
            }
            throw FetchError(.invalidURL, url: url, detail: "expected scheme://host/path", attempts: 0)
        }
        let bytes = url.utf8
        let scheme = bytes[..<schemeEnd.lowerBound]
        guard let first = scheme.first, isASCIILetter(first), scheme.allSatisfy({ isSchemeByte($0) }) else {
            throw FetchError(.invalidURL, url: url, detail: "malformed scheme", attempts: 0)
        }
        guard equalsIgnoringASCIICase(scheme, "http") || equalsIgnoringASCIICase(scheme, "https") else {
            throw FetchError(.unsupportedScheme, url: url,
                             detail: "'\(String(url[..<schemeEnd.lowerBound]).lowercased())'", attempts: 0)
        }
        if bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw FetchError(.invalidURL, url: url, detail: "spaces or control characters", attempts: 0)
        }
        let rest = bytes[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        // Where the user info ends is ambiguous with two '@' (libcurl takes the first): refused.
        if authority.firstIndex(of: UInt8(ascii: "@")) != authority.lastIndex(of: UInt8(ascii: "@")) {
            throw FetchError(.invalidURL, url: url, detail: "more than one '@' before the path (write %40)", attempts: 0)
        }
        let hostPort = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[authority.index(after: $0)...] } ?? authority
        if hostPort.isEmpty || hostPort.first == UInt8(ascii: ":") {
            throw FetchError(.invalidURL, url: url, detail: "no host", attempts: 0)
        }
        var port: Substring.UTF8View?
        if hostPort.first == UInt8(ascii: "[") {
            guard let close = hostPort.firstIndex(of: UInt8(ascii: "]")) else {
                throw FetchError(.invalidURL, url: url, detail: "unterminated IPv6 address", attempts: 0)
            }
            let after = hostPort[hostPort.index(after: close)...]
            if let colon = after.first {
                guard colon == UInt8(ascii: ":") else { throw FetchError(.invalidURL, url: url, detail: "malformed host", attempts: 0) }
                port = after.dropFirst()
            }
        } else if let colon = hostPort.firstIndex(of: UInt8(ascii: ":")) {
            port = hostPort[hostPort.index(after: colon)...]
        }
        // Empty ("host:") means the default port, as in RFC 3986.
        if let port, !port.isEmpty {
            guard port.count <= 5, port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let number = Int(Substring(port)), number >= 1, number <= 65535 else {
                throw FetchError(.invalidURL, url: url, detail: "malformed port '\(Substring(port))'", attempts: 0)
            }
        }
    }

    /// The scheme of a URL written without "//" ("mailto:x@y", "tel:5551234"):
    /// letters, digits, "+" and "-" up to the first ":". Not a scheme: one
    /// letter (a drive, "C:"), a name with a "." ("example.com:…"), or a name
    /// followed by 1 to 5 digits and then the end, "/", "?" or "#" (a host and
    /// port without a scheme, "localhost:8080/x").
    private static func leadingScheme(_ url: String) -> Substring? {
        let bytes = url.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = bytes[..<colon]
        guard scheme.count > 1, let first = scheme.first, isASCIILetter(first),
              scheme.allSatisfy({ isSchemeByte($0) && $0 != UInt8(ascii: ".") }) else { return nil }
        let rest = bytes[bytes.index(after: colon)...]
        let digits = rest.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        let after = rest.dropFirst(digits.count).first
        if (1...5).contains(digits.count),
           after == nil || after == UInt8(ascii: "/") || after == UInt8(ascii: "?") || after == UInt8(ascii: "#") {
            return nil
        }
        return Substring(scheme)
    }
}

private func isASCIILetter(_ byte: UInt8) -> Bool {
    (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
}

/// A letter, digit, "+", "-" or "." (RFC 3986 §3.1).
private func isSchemeByte(_ byte: UInt8) -> Bool {
    isASCIILetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
}

private func equalsIgnoringASCIICase(_ bytes: Substring.UTF8View, _ lowercase: StaticString) -> Bool {
    guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
    return zip(bytes, UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount))
        .allSatisfy { ($0 | 0x20) == $1 }
}
