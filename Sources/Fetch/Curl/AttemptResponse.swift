/// A finished attempt, raw: the loop thread only copies bytes out of libcurl;
/// the awaiting task or a completion worker parses the header block and
/// redacts URLs (off the loop thread).
struct AttemptResponse: Sendable {
    let status: Int
    /// The last response's header lines, exactly as received.
    let rawHeaders: [UInt8]
    /// A small 2xx body held in memory, not yet handed to the sink (see `CurlTransfer`).
    let bufferedBody: [UInt8]
    let bodyBytes: Int64
    /// The URL that answered, when a redirect was followed.
    let redirectedURL: String?
    let redirects: Int
    let httpVersion: String
    let timings: FetchResponse.Timings
    /// For an error status whose body then broke (framing, coding, an early
    /// close): libcurl's words for it. The status still stands.
    var bodyProblem: String?
}
