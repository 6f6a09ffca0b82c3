import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide libcurl set-up, done once before the first handle exists.
enum CurlGlobal {
    /// `curl_global_init` is not thread-safe, so it runs under Swift's
    /// once-only initialisation of a static. SIGPIPE is ignored because a
    /// peer that closes a socket mid-write must be an error, not a death.
    static let initialised: Result<Void, FetchError> = {
        signal(SIGPIPE, SIG_IGN)
        let rc = ccurl_global_init()
        if let loadError = ccurl_load_error() {
            return .failure(FetchError(.network, url: "", curlMessage: String(cString: loadError)))
        }
        guard rc == CURLE_OK else {
            return .failure(FetchError(.network, url: "", curlCode: Int(rc.rawValue),
                                       curlMessage: "curl_global_init failed: " + String(cString: curl_easy_strerror(rc))))
        }
        return .success(())
    }()

    /// libcurl's version string, e.g. "7.88.1".
    static var version: String { String(cString: ccurl_version()) }
}
