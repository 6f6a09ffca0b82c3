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
    public static func conditionalHeaders(_ stored: CacheMetadata) -> HTTPHeaders {
        guard stored.hasBody else { return HTTPHeaders() }
        var headers: [HTTPHeaders.Field] = []
        headers.reserveCapacity(2)
        if let etag = stored.header("ETag") { headers.append(HTTPHeaders.Field(name: "If-None-Match", value: etag)) }
        // A valid date is ASCII letters, digits, spaces, commas and colons (`HTTPDate`): always sendable.
        if let modified = stored.header("Last-Modified"), HTTPDate.parse(modified) != nil {
            headers.append(HTTPHeaders.Field(name: "If-Modified-Since", value: modified))
        }
        // A validator that cannot be sent (a line break in a damaged record) is not used: the request
        // goes unconditional rather than failing. Checked once, here (`HTTPHeaders(sendable:)`), not
        // again as the request is prepared.
        return HTTPHeaders(sendable: headers)
    }

    /// §4.3.4: a 304 updates the stored response only if its strong
    /// validator (when it sends one) is the stored one. Compared weakly, as
    /// servers add or drop `W/` when they compress.
    public static func validatorMatches(_ response: FetchResponse, _ stored: CacheMetadata) -> Bool {
        // Both tags' bytes read in place: the 304's in its header block (`withFirstHeaderValue`), the
        // stored one in the record (a decoded record keeps a longer value as its bytes). No field nor
        // `String` made, on the transfer loop, per 304.
        response.withFirstHeaderValue("ETag") { tagMatches($0, stored) }
    }

    /// `validatorMatches` of a 304's parsed fields.
    public static func validatorMatches(_ headers: HTTPHeaders, _ stored: CacheMetadata) -> Bool {
        guard var new = headers["ETag"] else { return true }
        return new.withUTF8 { tagMatches($0, stored) }
    }

    /// Whether the 304's `ETag` bytes `new` (nil: none sent) are the stored tag, compared weakly.
    private static func tagMatches(_ new: UnsafeBufferPointer<UInt8>?, _ stored: CacheMetadata) -> Bool {
        guard let new, let old = stored.field("ETag") else { return true }
        return old.withValueBytes { old in opaqueTag(new).elementsEqual(opaqueTag(old)) }
    }

    /// An entity tag's bytes without the spaces and tabs around it and
    /// without a weak tag's `W/`, in place (this runs for every 304).
    private static func opaqueTag(_ tag: UnsafeBufferPointer<UInt8>) -> Slice<UnsafeBufferPointer<UInt8>> {
        var start = 0, end = tag.count
        while start < end, tag[start] == 0x20 || tag[start] == 0x09 { start += 1 }
        while end > start, tag[end - 1] == 0x20 || tag[end - 1] == 0x09 { end -= 1 }
        if end - start >= 2, tag[start] == UInt8(ascii: "W"), tag[start + 1] == UInt8(ascii: "/") { start += 2 }
        return tag[start..<end]
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
        // Merged from the record's own header table: the kept headers are copied as their bytes (no
        // `[Header]` made of the stored ones, nor a `String` each).
        let replaced = meta.replaceHeaders(with: headers.fields, picking: Storability.isStored)
        if replaced.varies { meta.varyRequest = varyRequest.values(for: headers, url: stored.url) }
        return meta
    }
}
