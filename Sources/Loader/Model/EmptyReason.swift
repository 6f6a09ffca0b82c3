/// Why a URL ended in `empty`.
public enum EmptyReason: Sendable, Equatable {
    /// `--offline` and no intact stored entry.
    case notCached
    /// `--offline`, and an intact entry is stored, but for other request
    /// headers: those its `Vary` names that this request sends differently
    /// (lowercased; `*` for `Vary: *`, which no request matches).
    case storedForOtherHeaders(vary: [String])
    /// `--offline`, and a remembered error status (`status`, no body) is
    /// stored but stale: an error is never served stale (SPEC §5).
    case staleError(status: Int)
    /// `--offline`, and the URL's entry is there but broken (`problem`, as
    /// `cache list` words it: a body cut short or edited, a record that
    /// cannot be read), so it answers nothing until `cache verify` removes it.
    case broken(problem: String)
    /// A cancellation stopped the work before this URL started.
    case cancelled

    /// JSON `reason`: `not-cached` (a copy stored for other request headers
    /// is not cached for this request either: a script that handles offline
    /// misses handles it unchanged; JSON `vary` names the headers; so is a
    /// stale remembered error, JSON `staleStatus`, and a broken entry, JSON
    /// `broken`), or `cancelled`.
    /// What people are told of a broken entry (`problem`, as `cache list` words
    /// it): one sentence for `--offline`'s `empty` line and `cache path`.
    static func brokenSentence(_ problem: String) -> String {
        "not cached: its entry is broken (\(problem)); cache verify removes it"
    }

    public var rawValue: String {
        switch self {
        case .notCached, .storedForOtherHeaders, .staleError, .broken: "not-cached"
        case .cancelled: "cancelled"
        }
    }
}
