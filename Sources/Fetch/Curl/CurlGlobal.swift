import CCurl

/// Process-wide libcurl set-up, done once before the first handle exists.
enum CurlGlobal {
    /// `curl_global_init` is not thread-safe, so it runs under Swift's
    /// once-only initialisation of a static. SIGPIPE is not touched process-wide
    /// (children of the host process would inherit an ignored SIGPIPE):
    /// libcurl 7.88 sends with MSG_NOSIGNAL, OpenSSL writes through libcurl's
    /// own BIO, and the loop thread blocks SIGPIPE for whatever is left
    /// (`CurlLoop.blockSIGPIPE`).
    static let initialised: Result<Void, FetchError> = {
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

    /// Cores this process may run on (its CPU affinity: a cpuset or `taskset`
    /// counts, not the machine's), at least 1 (`Defaults.transferLoops`,
    /// `Defaults.completionWorkers`). Asked through CCurl, the C corner of
    /// this module (`sched_getaffinity` needs _GNU_SOURCE), so that only this
    /// folder imports it; libcurl is not loaded for it.
    static let usableCores = max(1, Int(ccurl_usable_cores()))

    /// libcurl's version string, e.g. "7.88.1".
    static var version: String { String(cString: ccurl_version()) }

    /// SSL_CTXs OpenSSL made for libcurl in this process, and those a transfer
    /// loop handed out again instead (`ccurl_ssl_ctx_reuse_begin`): for tests.
    static var tlsContexts: (made: UInt, reused: UInt) {
        (ccurl_ssl_contexts_made(), ccurl_ssl_contexts_reused())
    }
}
