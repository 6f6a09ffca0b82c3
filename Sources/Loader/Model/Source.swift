/// Where a URL's result came from (SPEC §3).
public enum Source: String, Sendable {
    /// Fresh stored copy, no network.
    case cache
    /// Downloaded now.
    case network
    /// The server answered 304; the stored body was reused.
    case revalidated
    /// A stale stored copy was served: the network failed (`staleIfError`),
    /// `stale-while-revalidate` allowed it, or the run was `offline`;
    /// `LoadResult.reason` says which when the loader knows.
    case stale
    /// Fresh copy from the shared remote cache tier (`--remote-cache`), now stored locally; no origin request.
    case remote
}
