import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One libcurl easy handle, configured once with the client's policy and then
/// reused for transfer after transfer: only the URL, the request headers and
/// the callback context change between transfers (`prepare`), so the hot path
/// sets one option (the URL) instead of resetting and setting twenty-five.
/// The callbacks' data and CURLINFO_PRIVATE are this object, set once: a
/// callback finds the running transfer in `transferContext`, the loop finds a
/// finished handle's transfer the same way (`CurlLoop.collectFinished`).
/// The request header list is the handle's own, kept while the next
/// transfer's lines are the same (most are: the client's headers and the
/// `Accept-Encoding` offer), and rebuilt only when they change.
///
/// Threading: created, used and destroyed only on the loop thread.
final class CurlEasy {
    /// CURLOPT_DNS_CACHE_TIMEOUT on a new handle: libcurl's own default, 60 s
    /// (https://curl.se/libcurl/c/CURLOPT_DNS_CACHE_TIMEOUT.html). A fact of
    /// libcurl, not a choice of ours (that is `Defaults.dnsAnswerLifetime`,
    /// equal today): `dnsCacheTimeout` must say what the handle holds, or an
    /// option that differs would never be set.
    private static let libcurlDNSCacheTimeout = 60

    let handle: UnsafeMutableRawPointer
    /// CURLOPT_ERRORBUFFER: libcurl writes its sentence here when a transfer fails.
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// CURLOPT_CURLU: libcurl's parse of the running transfer's URL, and what it was last parsed
    /// from whole (`ccurl_url`, `prepare`; nil: out of memory, then libcurl parses CURLOPT_URL
    /// itself). Freed after the handle.
    private let parsedURL: OpaquePointer?
    /// CURLOPT_HTTPHEADER as set now, and the lines it was built from.
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var headerLines: [String] = []
    /// Whether the last transfer was not a plain GET (its method options must be undone).
    private var changedMethod = false
    /// CURLOPT_PIPEWAIT as set now.
    private var waitsForMultiplexing = false
    private var currentMaxRedirects: Int
    /// Whether libcurl may take a proxy from the environment for this handle's transfers
    /// (`FetchConfiguration.environmentNamesProxy`; when not, `configure` set "no proxy").
    let readsProxyEnvironment: Bool
    /// CURLOPT_DNS_CACHE_TIMEOUT as set now (libcurl's default until `setConnectionPolicy`).
    private(set) var dnsCacheTimeout = CurlEasy.libcurlDNSCacheTimeout
    /// CURLOPT_FORBID_REUSE as set now.
    private var forbidsReuse = false
    /// CURLOPT_CONNECTTIMEOUT_MS and CURLOPT_TIMEOUT_MS as configured (0: none).
    private var connectTimeoutMs = 0
    private var timeoutMs = 0
    /// The running transfer has them shortened (`continueClocks`); `detach` restores them.
    private var clocksShortened = false
    /// The running transfer (`prepare`'s `userdata`, an unretained `CurlTransfer`; nil between
    /// transfers), for the callbacks, whose data is this object (`configure`), and for the loop
    /// when the handle finishes (CURLINFO_PRIVATE, also this object).
    private(set) var transferContext: UnsafeMutableRawPointer?
    /// CURLOPT_SHARE as set now (`use`); held, as the CA store, so that both outlive this handle
    /// (see `CurlShare`, `CertificateStore`).
    private var share: CurlShare
    private let certificates: CertificateStore

    /// Creates and configures a handle; nil with the reason when libcurl refuses.
    static func make(_ config: FetchConfiguration, share: CurlShare,
                     certificates: CertificateStore) -> Result<CurlEasy, CurlOptionFailure> {
        guard let handle = curl_easy_init() else {
            return .failure(CurlOptionFailure(call: "curl_easy_init", code: CURLE_OUT_OF_MEMORY))
        }
        let easy = CurlEasy(handle: handle, maxRedirects: config.maxRedirects, share: share, certificates: certificates,
                            readsProxyEnvironment: config.environmentNamesProxy)
        if let failure = easy.configure(config) { return .failure(failure) }
        return .success(easy)
    }

    private init(handle: UnsafeMutableRawPointer, maxRedirects: Int, share: CurlShare, certificates: CertificateStore,
                 readsProxyEnvironment: Bool) {
        self.handle = handle
        self.readsProxyEnvironment = readsProxyEnvironment
        self.share = share
        self.certificates = certificates
        currentMaxRedirects = maxRedirects
        errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        parsedURL = ccurl_url_new()
    }

    deinit {
        curl_easy_cleanup(handle)
        if let headerList { curl_slist_free_all(headerList) }   // after the handle that read it
        ccurl_url_free(parsedURL)   // after the handle too
        errorBuffer.deallocate()
    }

    /// The options every transfer of this client shares (SPEC §5 policy and limits).
    /// Each result is checked: a failure means this libcurl lacks something we rely on.
    private func configure(_ config: FetchConfiguration) -> CurlOptionFailure? {
        let easy = handle
        var failed: CurlOptionFailure?
        func check(_ name: String, _ rc: CURLcode) {
            if rc != CURLE_OK && failed == nil { failed = CurlOptionFailure(call: "setting CURLOPT_" + name, code: rc) }
        }
        // Only http and https, for the first request and every redirect (checked before any I/O).
        check("PROTOCOLS_STR", ccurl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        check("REDIR_PROTOCOLS_STR", ccurl_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        check("FOLLOWLOCATION", ccurl_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1))
        check("MAXREDIRS", ccurl_easy_setopt_long(easy, CURLOPT_MAXREDIRS, config.maxRedirects))
        check("NOSIGNAL", ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        connectTimeoutMs = milliseconds(config.connectTimeout)
        timeoutMs = milliseconds(config.timeout)
        check("CONNECTTIMEOUT_MS", ccurl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMs))
        check("TIMEOUT_MS", ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeoutMs))
        // A time past `Int32.max` seconds (infinity included) never runs out: no low-speed abort
        // (converting it trapped, and libcurl counts it in milliseconds in a `long`).
        if config.lowSpeedLimit > 0 && config.lowSpeedTime > 0 && config.lowSpeedTime <= Double(Int32.max) {
            check("LOW_SPEED_LIMIT", ccurl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, config.lowSpeedLimit))
            check("LOW_SPEED_TIME", ccurl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, Int(config.lowSpeedTime.rounded(.up)))))
        }
        // No CURLOPT_MAXFILESIZE: it refuses an error status or a coded body by its Content-Length.
        // The header callback refuses a 2xx body in no coding (`CurlTransfer.acceptsDeclaredLength`);
        // the write callback counts the decoded bytes of the others.
        // libcurl's own User-Agent field (a tunnel's CONNECT carries it too): libcurl 7.88 formats
        // "User-Agent: %s\r\n" for every transfer with `curl_maprintf`, the executable's since
        // session 19 (~0.4 k instructions), and copies it in the request's one formatting call. As a
        // request line of ours (sessions 17-19) it cost ~0.5 k more on the transfer loop: a call of
        // the format engine of its own and a walk of the custom-field checks (bench/history/cold.md "Session 20:
        // the loop's request set-up").
        check("USERAGENT", ccurl_easy_setopt_string(easy, CURLOPT_USERAGENT, config.userAgent))
        // Content codings are undone by `ContentDecoder` (in the write callback),
        // which, unlike libcurl 7.88, knows a stream cut before its end; the
        // offer is a request header (`FetchClient.headerLines`). libcurl must
        // hand over the bytes as they came.
        check("HTTP_CONTENT_DECODING", ccurl_easy_setopt_long(easy, CURLOPT_HTTP_CONTENT_DECODING, 0))
        // HTTP/2 only where TLS negotiates it by ALPN (h2c prior knowledge breaks reuse in 7.88.1).
        check("HTTP_VERSION", ccurl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)))
        check("BUFFERSIZE", ccurl_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, Defaults.receiveBufferSize))
        check("ERRORBUFFER", ccurl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer))
        check("WRITEFUNCTION", ccurl_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback))
        check("HEADERFUNCTION", ccurl_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback))
        check("PREREQFUNCTION", ccurl_easy_setopt_prereq_callback(easy, curlPrereqCallback))
        // The callbacks' data and the handle's private pointer: this object, for the handle's life
        // (unretained: `deinit` cleans the handle up first, so libcurl never passes it on after). Each
        // callback and the loop find the running transfer in `transferContext`; with none (between
        // transfers, or a handle libcurl would not let go of) a callback aborts. Set per transfer
        // (and cleared after it), the three pointers cost six option calls a transfer on the loop
        // thread (~0.4 k instructions; bench/history/cold.md "Session 27 — loop20").
        let this = Unmanaged.passUnretained(self).toOpaque()
        check("WRITEDATA", ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, this))
        check("HEADERDATA", ccurl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, this))
        check("PREREQDATA", ccurl_easy_setopt_pointer(easy, CURLOPT_PREREQDATA, this))
        check("PRIVATE", ccurl_easy_setopt_pointer(easy, CURLOPT_PRIVATE, this))
        // TLS: sessions shared across the loop's handles (DNS answers are the multi handle's; `use`
        // picks the host's share); the client's one CA store installed in every connection (CertificateStore).
        check("SHARE", ccurl_easy_setopt_pointer(easy, CURLOPT_SHARE, share.handle))
        // Every new TLS connection, once its TCP connection is made: `curlSSLContextCallback` installs
        // the store and reports the connection. Without a store the callback only reports, and a
        // libcurl that has no such hook (another TLS library) reports at CURLOPT_PREREQFUNCTION alone.
        let hooked = ccurl_easy_setopt_ssl_ctx_callback(easy, curlSSLContextCallback)
        if hooked == CURLE_OK {
            // Unretained: the handle is this object's own and `deinit` cleans it up first, so
            // libcurl never calls `curlSSLContextCallback` with this object gone.
            check("SSL_CTX_DATA", ccurl_easy_setopt_pointer(easy, CURLOPT_SSL_CTX_DATA, this))
        }
        if certificates.store != nil {
            check("SSL_CTX_FUNCTION (the client's CA store)", hooked)
            check("CAINFO and CAPATH (none: the client's CA store)", ccurl_easy_clear_ca_files(easy))
        } else if let caInfo = certificates.caInfo {
            check("CAINFO", ccurl_easy_setopt_string(easy, CURLOPT_CAINFO, caInfo))
        }
        // TLS 1.3 suites in browsers' order (`Defaults.tls13CipherSuites`); a libcurl built on
        // another TLS library than OpenSSL has no such option and keeps its own order.
        let suites = ccurl_easy_setopt_string(easy, CURLOPT_TLS13_CIPHERS, Defaults.tls13CipherSuites)
        if suites != CURLE_NOT_BUILT_IN { check("TLS13_CIPHERS", suites) }
        if config.insecure {
            check("SSL_VERIFYPEER", ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0))
            check("SSL_VERIFYHOST", ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0))
        }
        if let sigV4 = config.awsSigV4 {
            check("AWS_SIGV4", ccurl_easy_setopt_string(easy, CURLOPT_AWS_SIGV4, sigV4))
        }
        if let userPassword = config.userPassword {
            check("USERPWD", ccurl_easy_setopt_string(easy, CURLOPT_USERPWD, userPassword))
        }
        if config.verboseCurl {
            check("VERBOSE", ccurl_easy_setopt_long(easy, CURLOPT_VERBOSE, 1))
        }
        // Proxies come from the environment, as curl reads them (docs/http.md). libcurl 7.88 reads
        // five of these variables at every transfer (`getenv` and a copy each, about 1.5 k
        // instructions on the loop per URL: bench/history/revalidate.md "Session 12: revalidate"). When none is
        // set (`ProxyEnvironment`, read once by `FetchClient`), saying "no proxy" once here is the same answer.
        // A proxy's answer to CONNECT is not the origin's response: the header callback must not
        // take its status line (a refused tunnel was reported as the origin's "HTTP 0").
        check("SUPPRESS_CONNECT_HEADERS", ccurl_easy_setopt_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1))
        if !config.environmentNamesProxy {
            check("PROXY (none: no proxy variable is set)", ccurl_easy_setopt_string(easy, CURLOPT_PROXY, ""))
            check("NOPROXY", ccurl_easy_setopt_string(easy, CURLOPT_NOPROXY, ""))
        }
        return failed
    }

    /// Points the handle at one transfer: its URL, its request header lines
    /// ("Name: value") and the callbacks' context (`userdata`, the transfer, unretained: see
    /// `CurlTransfer`), which the callbacks find in `transferContext`.
    func prepare(url: String, headerLines lines: [String], maxRedirects: Int, waitForMultiplexing: Bool,
                 userdata: UnsafeMutableRawPointer) -> CurlOptionFailure? {
        errorBuffer[0] = 0
        var failed: CurlOptionFailure?
        func check(_ name: String, _ rc: CURLcode) {
            if rc != CURLE_OK && failed == nil { failed = CurlOptionFailure(call: "setting CURLOPT_" + name, code: rc) }
        }
        // `withCString`: a Swift string passed as a C string argument is copied into a new array
        // first (`utf8CString`, an allocation per transfer); libcurl copies the URL itself.
        // The URL is parsed here, by libcurl, into the handle's CURLOPT_CURLU: libcurl 7.88 parsing
        // CURLOPT_URL itself at the transfer's start would also format the whole URL back through
        // its printf engine, a character at a time (`curl_url_get`, ~7 k instructions on this
        // thread per transfer), to keep as the transfer's URL. With a parse handed over it copies
        // the parse and keeps CURLOPT_URL as given: the same parts, the same request, the same
        // redirects (resolved against the parse); only CURLINFO_EFFECTIVE_URL, which is read after
        // a redirect alone, would show the URL unnormalised. A URL of the scheme and authority this
        // handle last parsed whole, with a plain path and query (most of a batch's), only has those
        // two set in the parse it holds (`ccurl_url_parse`: the same parts for ~0.5 k instructions
        // against ~5 k).
        check("URL", url.withCString { ccurl_easy_set_url(handle, parsedURL, $0) })
        if maxRedirects != currentMaxRedirects {
            check("MAXREDIRS", ccurl_easy_setopt_long(handle, CURLOPT_MAXREDIRS, maxRedirects))
            currentMaxRedirects = maxRedirects
        }
        transferContext = userdata
        if let failure = self.waitForMultiplexing(waitForMultiplexing), failed == nil { failed = failure }
        if let failure = setHeaderLines(lines), failed == nil { failed = failure }
        return failed
    }

    /// Points the handle at `share` for its next transfer (CURLOPT_SHARE,
    /// set only when it changes; not while the handle is in the multi handle).
    func use(_ share: CurlShare) -> CurlOptionFailure? {
        guard share !== self.share else { return nil }
        let rc = ccurl_easy_setopt_pointer(handle, CURLOPT_SHARE, share.handle)
        guard rc == CURLE_OK else { return CurlOptionFailure(call: "setting CURLOPT_SHARE", code: rc) }
        self.share = share
        return nil
    }

    /// Sets CURLOPT_HTTPHEADER to `lines`, unless it holds them already
    /// (the same array is compared by identity first: no string compared).
    private func setHeaderLines(_ lines: [String]) -> CurlOptionFailure? {
        if lines == headerLines { return nil }
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let appended = curl_slist_append(list, line) else {
                if let list { curl_slist_free_all(list) }
                return CurlOptionFailure(call: "curl_slist_append", code: CURLE_OUT_OF_MEMORY)
            }
            list = appended
        }
        let rc = ccurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list)
        guard rc == CURLE_OK else {
            if let list { curl_slist_free_all(list) }
            return CurlOptionFailure(call: "setting CURLOPT_HTTPHEADER", code: rc)
        }
        // libcurl reads the list only during a transfer, and this handle runs none now.
        if let headerList { curl_slist_free_all(headerList) }
        headerList = list
        headerLines = lines
        return nil
    }

    /// The next transfer's use of libcurl's caches: how long its DNS cache
    /// trusts an answer (`DNSCacheExpiry`; -1: no prune walk at its end) and
    /// whether its connection stays open for reuse when it ends (closed when
    /// its host has nothing more queued: see `FetchAttemptGate.keepsConnection`).
    /// Each option is set only when it changes.
    func setConnectionPolicy(dnsCacheTimeout timeout: Int, keepConnection: Bool) -> CurlOptionFailure? {
        if timeout != dnsCacheTimeout {
            let rc = ccurl_easy_setopt_long(handle, CURLOPT_DNS_CACHE_TIMEOUT, timeout)
            guard rc == CURLE_OK else { return CurlOptionFailure(call: "setting CURLOPT_DNS_CACHE_TIMEOUT", code: rc) }
            dnsCacheTimeout = timeout
        }
        if keepConnection == forbidsReuse {
            let rc = ccurl_easy_setopt_long(handle, CURLOPT_FORBID_REUSE, keepConnection ? 0 : 1)
            guard rc == CURLE_OK else { return CurlOptionFailure(call: "setting CURLOPT_FORBID_REUSE", code: rc) }
            forbidsReuse = !keepConnection
        }
        return nil
    }

    /// Lets the running transfer's connection stay open for reuse after all
    /// (`CurlTransfer.keepConnectionForRetry`): libcurl reads
    /// CURLOPT_FORBID_REUSE when the transfer ends. False when libcurl refused.
    func keepConnection() -> Bool {
        guard forbidsReuse else { return true }
        guard ccurl_easy_setopt_long(handle, CURLOPT_FORBID_REUSE, 0) == CURLE_OK else { return false }
        forbidsReuse = false
        return true
    }

    /// Whether this transfer waits for a connection being set up to say whether
    /// it multiplexes (HTTP/2) instead of opening its own (CURLOPT_PIPEWAIT, set
    /// only when it changes; see `CurlLoop.unconnectedHosts` for when it must not).
    func waitForMultiplexing(_ wait: Bool) -> CurlOptionFailure? {
        guard wait != waitsForMultiplexing else { return nil }
        let rc = ccurl_easy_setopt_long(handle, CURLOPT_PIPEWAIT, wait ? 1 : 0)
        guard rc == CURLE_OK else { return CurlOptionFailure(call: "setting CURLOPT_PIPEWAIT", code: rc) }
        waitsForMultiplexing = wait
        return nil
    }

    /// Sets the request method: a GET undoes what a previous PUT set; a PUT
    /// uploads `length` bytes that `curlReadCallback` reads from the transfer
    /// (`userdata`, unretained: the transfer outlives its use of the handle).
    func prepareMethod(_ method: FetchRequest.Method, length: Int64, userdata: UnsafeMutableRawPointer) -> CurlOptionFailure? {
        var failed: CurlOptionFailure?
        func check(_ name: String, _ rc: CURLcode) {
            if rc != CURLE_OK && failed == nil { failed = CurlOptionFailure(call: "setting CURLOPT_" + name, code: rc) }
        }
        switch method {
        case .get:
            guard changedMethod else { return nil }
            check("UPLOAD", ccurl_easy_setopt_long(handle, CURLOPT_UPLOAD, 0))
            check("READDATA", ccurl_easy_setopt_pointer(handle, CURLOPT_READDATA, nil))
            check("HTTPGET", ccurl_easy_setopt_long(handle, CURLOPT_HTTPGET, 1))
            changedMethod = false
        case .put:
            changedMethod = true
            check("UPLOAD", ccurl_easy_setopt_long(handle, CURLOPT_UPLOAD, 1))   // a PUT
            check("INFILESIZE_LARGE", ccurl_easy_setopt_off_t(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(length)))
            check("READFUNCTION", ccurl_easy_setopt_data_callback(handle, CURLOPT_READFUNCTION, curlReadCallback))
            check("READDATA", ccurl_easy_setopt_pointer(handle, CURLOPT_READDATA, userdata))
        }
        return failed
    }

    /// Keeps the clocks of a transfer that is started over after it waited
    /// `waited` seconds (`CurlLoop.restartWaiting`): libcurl 7.88 starts a
    /// re-added transfer's connect and transfer timeouts afresh, so they are
    /// set to what is left of them (at least 1 ms); `detach` restores them.
    /// False when libcurl refused (the transfer then has its clocks afresh).
    func continueClocks(after waited: Double) -> Bool {
        let spent = milliseconds(waited)
        clocksShortened = true
        var rc = CURLE_OK
        if connectTimeoutMs > 0 {
            rc = ccurl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, max(1, connectTimeoutMs - spent))
        }
        if rc == CURLE_OK && timeoutMs > 0 {
            rc = ccurl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, max(1, timeoutMs - spent))
        }
        return rc == CURLE_OK
    }

    /// Forgets the finished transfer's context (the header list stays: it is
    /// the handle's; a stranded handle's callbacks abort on no context); false
    /// when the handle must not be reused (its clocks, shortened by
    /// `continueClocks`, could not be restored).
    func detach() -> Bool {
        transferContext = nil
        guard clocksShortened else { return true }
        guard ccurl_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMs) == CURLE_OK,
              ccurl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMs) == CURLE_OK else { return false }
        clocksShortened = false
        return true
    }

    /// Makes a new TLS connection's SSL_CTX verify with the client's CA store
    /// (`CertificateStore`), if it has one; libcurl fails the connection on anything but CURLE_OK.
    func installCertificates(in sslContext: UnsafeMutableRawPointer) -> CURLcode {
        guard let store = certificates.store else { return CURLE_OK }
        return ccurl_ssl_ctx_use_store(sslContext, store)
    }

    /// libcurl's sentence about the last failure, or its generic text for `code`.
    func errorText(for code: CURLcode) -> String {
        guard errorBuffer[0] != 0 else { return curlDescription(code) }
        var text = String(cString: errorBuffer)
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    func long(_ info: CURLINFO) -> Int {
        var value = 0
        return ccurl_easy_getinfo_long(handle, info, &value) == CURLE_OK ? value : 0
    }

    func seconds(_ info: CURLINFO) -> Double {
        var value = 0.0
        return ccurl_easy_getinfo_double(handle, info, &value) == CURLE_OK ? value : 0
    }

    func string(_ info: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>?
        guard ccurl_easy_getinfo_string(handle, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}

@available(*, unavailable)
extension CurlEasy: Sendable {}

/// A libcurl call that refused (this libcurl lacks something we rely on, or is out of memory).
struct CurlOptionFailure: Error {
    let call: String
    let code: CURLcode

    func error(url: String) -> FetchError {
        FetchError(.network, url: url, curlCode: Int(code.rawValue), curlMessage: call + ": " + curlDescription(code))
    }
}

/// `seconds` as libcurl's milliseconds (0: none). A duration too long for a
/// `long` of milliseconds (`--timeout 1e20`) is the longest one, never a trap.
private func milliseconds(_ seconds: Double) -> Int {
    guard seconds > 0 else { return 0 }
    let milliseconds = (seconds * 1000).rounded()
    return milliseconds >= Double(Int.max) ? Int.max : max(1, Int(milliseconds))
}
