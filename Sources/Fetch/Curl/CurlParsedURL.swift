import CCurl

/// A URL parsed by libcurl ahead of its transfer, off the transfer loop
/// (`FetchClient.prepare(_:urlChecked:parsingURL:)`, on a batch's reader).
///
/// libcurl 7.88 parses CURLOPT_URL again at the start of every transfer
/// (`curl_url_set`, then `curl_url_get` of the whole URL through its printf
/// engine: about 11 k instructions on the loop per 304; bench/README
/// "Session 16: revalidate"). Given CURLOPT_CURLU as well, it copies this
/// parse instead (`curl_url_dup`), and given CURLOPT_URL as the normalised URL
/// that parse reads back, it reads nothing back either: the transfer starts
/// from the same URL parts and the same URL string as its own parse would
/// give (`ccurl_url_parse` uses its flags). A redirect or a retry is parsed
/// by libcurl as before.
///
/// Immutable once made; libcurl only reads it (`curl_url_dup`), so any
/// thread may hold it. The transfer that uses it keeps it alive (its
/// `TransferSpec`), and `CurlEasy.detach` clears CURLOPT_CURLU after it.
final class CurlParsedURL: @unchecked Sendable {
    private let parsed: ccurl_parsed_url
    /// The CURLU handle, for CURLOPT_CURLU.
    let handle: UnsafeMutableRawPointer
    /// The URL libcurl reads back from the parse, for CURLOPT_URL.
    let normalised: UnsafePointer<CChar>

    /// `url` parsed as libcurl would at its transfer's start; nil when libcurl
    /// cannot be loaded or refuses it (the transfer then sets CURLOPT_URL alone,
    /// and fails as it always did).
    static func parse(_ url: String) -> CurlParsedURL? {
        guard case .success = CurlGlobal.initialised else { return nil }
        let parsed = url.withCString { ccurl_url_parse($0) }
        guard let handle = UnsafeMutableRawPointer(parsed.handle), let normalised = parsed.normalised else { return nil }
        return CurlParsedURL(parsed, handle: handle, normalised: normalised)
    }

    private init(_ parsed: ccurl_parsed_url, handle: UnsafeMutableRawPointer, normalised: UnsafeMutablePointer<CChar>) {
        self.parsed = parsed
        self.handle = handle
        self.normalised = UnsafePointer(normalised)
    }

    deinit { ccurl_url_free(parsed) }
}
