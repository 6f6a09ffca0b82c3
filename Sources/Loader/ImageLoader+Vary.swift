import DiskCache
import Fetch
import Support

/// RFC 9111 §4.1: a stored response whose `Vary` names request headers is
/// reused only for requests that send the same values for those headers,
/// compared after normalisation (`VaryNormalization`).
extension ImageLoader {
    /// The value this loader sends for request header `name`, normalised:
    /// every `-H` line of that name combined, else what libcurl sends by
    /// default (`User-Agent`, `Accept: */*`), else "" (not sent).
    func requestHeaderValue(_ name: String) -> String {
        let lines = options.fetch.headers.values(name)
        if !lines.isEmpty { return VaryNormalization.normalize(lines.joined(separator: ","), name: name) }
        switch name.lowercased() {
        case "user-agent": return options.fetch.userAgent
        case "accept": return "*/*"
        default: return ""
        }
    }

    /// The header names a `Vary` field value lists, lowercased.
    static func varyNames(_ vary: String) -> [String] {
        vary.split(separator: ",").map { trimWhitespaceLower($0) }.filter { !$0.isEmpty }
    }

    /// What to store beside a response: the values this request sent for each
    /// header its `Vary` names (`*` is kept in `Vary` itself and never matches).
    func varyValues(_ headers: HTTPHeaders) -> [CacheMetadata.Header] {
        guard let vary = headers.combined("Vary") else { return [] }
        return Self.varyNames(vary).filter { $0 != "*" }.map { CacheMetadata.Header($0, requestHeaderValue($0)) }
    }

    /// Whether `entry` may answer this loader's requests: every header its
    /// `Vary` names has the stored value now (both normalised), or, for
    /// `Accept-Language`, the request's first choice is the stored response's
    /// `Content-Language` (the language the server would select). `Vary: *`
    /// never matches.
    func varyMatches(_ entry: CacheEntry) -> Bool {
        guard entry.metadata.header("Vary") != nil else { return true }   // the usual case: no copies
        let fields = entry.metadata.headers.filter { $0.name.lowercased() == "vary" }
        guard !fields.isEmpty else { return true }
        for name in Self.varyNames(fields.map(\.value).joined(separator: ",")) {
            if name == "*" { return false }
            let then = entry.metadata.varyRequest.first { $0.name.lowercased() == name }?.value ?? ""
            let now = requestHeaderValue(name)
            if now == VaryNormalization.normalize(then, name: name) { continue }
            if name == "accept-language", let language = entry.metadata.header("Content-Language"),
               VaryNormalization.firstChoice(ofAcceptLanguage: now, is: language) { continue }
            return false
        }
        return true
    }
}
