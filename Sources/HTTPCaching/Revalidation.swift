import DiskCache
import Fetch
import Support

/// Revalidating a stored response (RFC 9111 §4.3): the conditional request,
/// whether a `304` is about the stored representation, and the merge of its
/// headers into the stored record.
public enum Revalidation {
    /// The validators to send for a stored response with a body (§4.3.1):
    /// `If-None-Match` with its `ETag`, `If-Modified-Since` with its valid
    /// `Last-Modified`, verbatim (nginx compares the text exactly).
    public static func conditionalHeaders(_ stored: CacheMetadata) -> [(name: String, value: String)] {
        guard stored.hasBody else { return [] }
        var headers: [(name: String, value: String)] = []
        if let etag = stored.header("ETag") { headers.append(("If-None-Match", etag)) }
        if let modified = stored.header("Last-Modified"), HTTPDate.parse(modified) != nil {
            headers.append(("If-Modified-Since", modified))
        }
        return headers
    }

    /// §4.3.4: a 304 updates the stored response only if its strong
    /// validator (when it sends one) is the stored one. Compared weakly, as
    /// servers add or drop `W/` when they compress.
    public static func validatorMatches(_ headers: HTTPHeaders, _ stored: CacheMetadata) -> Bool {
        guard let new = headers["ETag"], let old = stored.header("ETag") else { return true }
        func opaque(_ tag: String) -> Substring {
            let trimmed = Substring(trimWhitespace(tag))
            return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
        }
        return opaque(new) == opaque(old)
    }

    /// §3.2 and §4.3.4: the stored record after a 304. The body stays; every
    /// stored header the 304 carries replaces the stored ones of that name,
    /// the others stay; the times are the new exchange's. When the 304 sends
    /// `Vary`, the request values it names are recorded anew (`varyRequest`).
    public static func merged(_ stored: CacheMetadata, with headers: HTTPHeaders, varyRequest: VaryRequest,
                              requestTime: Double, responseTime: Double) -> CacheMetadata {
        var meta = stored
        meta.requestTime = requestTime
        meta.responseTime = responseTime
        let updates = headers.filter { Storability.isStored($0.name) }
        meta.headers.removeAll { old in updates.contains { asciiCaseInsensitiveEqual($0.name, old.name) } }
        meta.headers += updates.map { CacheMetadata.Header($0.name, $0.value) }
        if updates.contains(where: { asciiCaseInsensitiveEqual($0.name, "vary") }) {
            meta.varyRequest = varyRequest.values(for: headers)
        }
        return meta
    }
}
