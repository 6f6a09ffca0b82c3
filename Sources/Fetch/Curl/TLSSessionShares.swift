/// The TLS session caches of one `CurlLoop`: `Defaults.tlsSessionShares`
/// libcurl share handles, each keeping the sessions of the https hosts whose
/// "host:port" hashes to it.
///
/// Why: libcurl 7.88 keeps at most 8 TLS sessions in a share handle (a fixed
/// size, the oldest evicted). With one share per loop, a run over more than
/// 8 https hosts resumed nothing: by the time a host reconnected, 8 other
/// hosts had stored theirs. A resumed TLS 1.3 handshake skips the server's certificate: its
/// parse (OpenSSL 3.0 builds a decoder for its key each time) and its
/// verification, nearly half of the CPU a new connection costs (bench/history/internet.md,
/// "Session 10: HTTPS CPU").
///
/// How: each transfer's easy handle is pointed at its host's share before the
/// transfer starts (CURLOPT_SHARE, set only when it changes; never while the
/// handle is in the multi handle). libcurl still finds and stores sessions by
/// host, port and TLS settings, as with one share; a share only decides
/// which hosts compete for its 8 places. Plain http transfers use the first
/// share (they store no sessions). A connection's sessions are stored by
/// whichever transfer reads its tickets, which is one to the same host, so
/// in its host's share. The CA store and verification are untouched: a
/// resumed session carries the certificate verified by its full handshake,
/// and libcurl checks the host name against it as before.
///
/// Over HTTP/2 this takes one more step: libcurl 7.88 closes such a
/// connection without a close_notify, after which OpenSSL no longer resumes
/// the session that connection used, so libcurl caches a copy
/// (`ccurl_ssl_ctx_keep_sessions`, from `curlSSLContextCallback`).
///
/// Threading: the loop thread's only (see `CurlShare`).
final class TLSSessionShares {
    private let shares: [CurlShare]

    static func make(count: Int = Defaults.tlsSessionShares) -> Result<TLSSessionShares, FetchError> {
        var shares: [CurlShare] = []
        for _ in 0..<max(1, count) {
            switch CurlShare.make() {
            case .success(let share): shares.append(share)
            case .failure(let error): return .failure(error)
            }
        }
        return .success(TLSSessionShares(shares: shares))
    }

    private init(shares: [CurlShare]) {
        self.shares = shares
    }

    /// The share for a transfer to `hostPort` (an https URL's "host:port";
    /// nil for plain http). The bits above those that pick a host's loop
    /// (`TransferLoops.homeHash`), so a loop's hosts spread over all its shares.
    func share(for hostPort: Substring?) -> CurlShare {
        guard let hostPort, shares.count > 1 else { return shares[0] }
        return shares[Int((TransferLoops.homeHash(hostPort) >> 40) % UInt64(shares.count))]
    }
}

@available(*, unavailable)
extension TLSSessionShares: Sendable {}
