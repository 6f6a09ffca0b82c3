/// What a private cache may do with a final status code (RFC 9110 §15,
/// RFC 9111 §3, §4.2.2, §5.2.2.3).
public enum StatusCacheability {
    /// Heuristically cacheable (RFC 9110 §15.1): fresh for 10 % of
    /// `Date − Last-Modified` when the response gives no explicit freshness.
    /// A switch, not a set: every hit asks, and a set lookup hashes.
    public static func isHeuristicallyCacheable(_ status: Int) -> Bool {
        switch status {
        case 200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501: true
        default: false
        }
    }

    /// The status codes whose caching requirements asyncfetch implements:
    /// every final code that RFC 9110 defines. `must-understand` (§5.2.2.3)
    /// allows storing only these; 299 or 599, say, are not understood.
    public static let understood: Set<Int> = [
        200, 201, 202, 203, 204, 205, 206,
        300, 301, 302, 303, 304, 305, 307, 308,
        400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422, 426,
        500, 501, 502, 503, 504, 505,
    ]
}
