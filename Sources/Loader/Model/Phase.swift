/// The phase of one URL: `empty → loading → success | failure` (SPEC §2).
public enum Phase: Sendable {
    case empty(EmptyReason)
    /// A transfer or revalidation is under way. It carries the stored copy
    /// (source `stale`) when there is one, so that a UI can keep showing it
    /// while the refresh runs; nil when nothing usable is stored.
    case loading(LoadResult?)
    case success(LoadResult)
    case failure(LoadError)

    public var name: String {
        switch self {
        case .empty: return "empty"
        case .loading: return "loading"
        case .success: return "success"
        case .failure: return "failure"
        }
    }

    public var isTerminal: Bool {
        if case .loading = self { return false }
        return true
    }
}
