import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// The CAs one client trusts: one OpenSSL `X509_STORE`, built when its first
/// transfer loop starts and installed in every TLS connection of every loop
/// (CURLOPT_SSL_CTX_FUNCTION), so no connection and no loop reads a CA file.
///
/// Why: Debian's libcurl sets a CA path, and while one is set libcurl 7.88
/// builds the CA store afresh for every new TLS connection: it re-reads and
/// parses the whole system bundle, about 25 ms of CPU and several MB each
/// (FACTS.md, "TLS to many hosts"). With one bundle file and no path it parses
/// it once per multi handle, so once per transfer loop (30-55 ms each).
///
/// The system's CAs (`systemCABundle`) are, by default, Debian's
/// `/etc/ssl/certs`: a directory of certificates by subject hash (OpenSSL's
/// `c_rehash` layout, which `update-ca-certificates` keeps beside the bundle,
/// with the same CAs). OpenSSL reads from it only the issuers a handshake asks
/// for, and keeps them in the store; a host signed by no system CA costs one
/// `stat`. A bundle file there (tests use one) is loaded whole, once.
/// `--cacert FILE`'s certificates are added to the same store, so both are
/// trusted, as when libcurl's CA path supplied the system's. The file is read
/// once, whatever the system's CAs are: a pipe (`--cacert <(…)`) serves too.
///
/// libcurl 7.88 still sets up the store of each new connection *after* the
/// callback (`Curl_ssl_setup_x509_store`): with CURLOPT_CAINFO and
/// CURLOPT_CAPATH NULL it loads nothing into it, sets the two flags the store
/// already has, and caches it in the multi handle for that loop's next
/// connections: the same store again.
///
/// Falls back to libcurl reading the CA files itself (CURLOPT_CAINFO =
/// `caFile`; libcurl's default CA locations; correct, only slower), where it
/// then reports any problem in its own words for each https URL: when the
/// system CA location is unset or missing (libcurl's own defaults were the
/// documented meaning), when a file cannot be loaded, or when libcurl does
/// not use OpenSSL. `--insecure` builds no store: nothing is verified.
///
/// Threading: immutable once made; read by every loop thread of the client.
/// OpenSSL's X509_STORE is safe to share between threads (it locks its
/// certificate cache). Every `CurlEasy` holds this object, and every
/// connection's SSL_CTX holds a reference to the store itself.
final class CertificateStore: Sendable {
    /// The store (an `X509_STORE *`), or nil for libcurl's own CA handling.
    /// Written once, in `init`.
    nonisolated(unsafe) let store: UnsafeMutableRawPointer?
    /// The file for CURLOPT_CAINFO when there is no store, or nil to leave libcurl's own setting.
    let caInfo: String?

    init(_ config: FetchConfiguration) {
        let system = config.systemCABundle.flatMap { access($0, R_OK) == 0 ? $0 : nil }
        guard !config.insecure, let system else {
            (store, caInfo) = (nil, config.caFile)
            return
        }
        var why: UnsafePointer<CChar>?
        let made = ccurl_ca_store_new(system, config.caFile, &why)
        (store, caInfo) = (made, made == nil ? config.caFile : nil)
    }

    deinit {
        ccurl_ca_store_free(store)   // the connections still open hold their own references
    }
}
