#if canImport(Glibc)
import Glibc
#endif

/// The environment variables libcurl 7.88 may read to choose a proxy for an
/// http or https URL, or to go without one: `<scheme>_proxy` (for https also
/// in capitals; never `HTTP_PROXY`), `all_proxy`, `no_proxy`, each also in
/// capitals. `FetchClient` asks once (`FetchConfiguration.environmentNamesProxy`).
enum ProxyEnvironment {
    private static let variables = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                                    "no_proxy", "NO_PROXY"]

    /// Whether any of them is set (an empty value counts: libcurl reads it too).
    static func namesProxy() -> Bool {
        variables.contains { getenv($0) != nil }
    }
}
