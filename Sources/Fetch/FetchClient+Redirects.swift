/// Redirect chains that `fetch` resumes itself: libcurl retries a request
/// whose reused connection the server had closed only five times per
/// transfer (redirect hops included), so a chain through a server that
/// closes every idle connection goes on from the hop that died.
extension FetchClient {
    /// The request headers for a chain resumed at `target`: libcurl never sends
    /// the user's `Authorization` or `Cookie` to another host when it follows a
    /// redirect itself, and neither does a resumed chain.
    static func linesForRedirect(_ lines: [String], from origin: String, to target: String) -> [String] {
        guard authority(of: origin) != authority(of: target) else { return lines }
        return lines.filter { line in
            let name = line.prefix { $0 != ":" && $0 != ";" }.lowercased()   // "Name;": an empty value
            return name != "authorization" && name != "cookie"
        }
    }

    /// Scheme and authority of an absolute URL, lowercased ("http://host:8080").
    private static func authority(of url: String) -> String {
        let bytes = Array(url.utf8)
        var i = 0
        while i + 2 < bytes.count, !(bytes[i] == 0x3A && bytes[i + 1] == 0x2F && bytes[i + 2] == 0x2F) { i += 1 }
        var end = i + 3
        while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 { end += 1 }
        return String(decoding: bytes[..<min(end, bytes.count)], as: UTF8.self).lowercased()
    }
}
