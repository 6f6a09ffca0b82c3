import CCurl

/// One libcurl share handle of a `CurlLoop`, for TLS sessions: every easy
/// handle pointed at it finds the sessions the others stored, so a new
/// connection to a host seen before resumes its TLS session (an abbreviated
/// handshake) whichever pooled handle makes it. libcurl 7.88 keeps only the 8
/// latest sessions in a share (a fixed size), so a loop has many
/// (`TLSSessionShares`, one per group of hosts); keeping connections open
/// still saves more (`FetchAttemptGate.keepsConnection`,
/// `CurlTransfer.keepConnectionForRetry`).
///
/// DNS answers are not shared here: the loop's multi handle has its own DNS
/// cache, which every easy handle in it uses, so sharing them would reach
/// no further; and libcurl 7.88 keeps a share's answers in 23 hash buckets
/// against the multi handle's 71, so with thousands of hosts each lookup
/// walks a list three times longer (`DNSCacheExpiry` says how old answers go).
///
/// Per loop, not per client: `TransferLoops` keeps every https host
/// on one loop, so a client-wide share would resume no TLS session that the
/// loop's own does not, while it would cost a lock and unlock on every
/// cache use, contended between the loops (CURLSHOPT_LOCKFUNC).
///
/// Threading: only the loop thread uses the easy handles that point here, so
/// no lock callbacks are set (libcurl needs them only when a share is used
/// from several threads at once). Lifetime: every
/// `CurlEasy` holds a strong reference to its share, so the share is cleaned
/// up after the last easy handle using it (`curl_share_cleanup` refuses a
/// share still in use).
final class CurlShare {
    let handle: UnsafeMutableRawPointer

    static func make() -> Result<CurlShare, FetchError> {
        guard let handle = curl_share_init() else {
            return .failure(FetchError(.network, url: "", curlMessage: "curl_share_init failed"))
        }
        for data in [CURL_LOCK_DATA_SSL_SESSION] {
            let rc = ccurl_share_setopt_long(handle, CURLSHOPT_SHARE, Int(data.rawValue))
            guard rc == CURLSHE_OK else {
                _ = curl_share_cleanup(handle)   // unused so far: cannot be in use
                return .failure(FetchError(.network, url: "", curlMessage: "curl_share_setopt: " + String(cString: curl_share_strerror(rc))))
            }
        }
        return .success(CurlShare(handle: handle))
    }

    private init(handle: UnsafeMutableRawPointer) {
        self.handle = handle
    }

    deinit {
        // Only CURLSHE_IN_USE could fail, and no easy handle outlives this object (see above).
        _ = curl_share_cleanup(handle)
    }
}

@available(*, unavailable)
extension CurlShare: Sendable {}
