import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// What one attempt produced, as handed from the loop thread to the waiting task.
enum AttemptOutcome: Sendable {
    case response(AttemptResponse)
    case failure(FetchError)
}

struct AttemptResponse: Sendable {
    let status: Int
    let headers: HTTPHeaders
    let bodyBytes: Int64
    let effectiveURL: String
    let redirects: Int
    let httpVersion: String
    let timings: FetchResponse.Timings
}

/// Everything needed to configure an easy handle; a plain value so that it
/// can be handed to the loop thread.
struct TransferSpec: Sendable {
    let url: String
    let headerLines: [String]
    let configuration: FetchConfiguration
    let sink: BodySink
}

/// One attempt of one request, owned by the `CurlLoop`.
///
/// Ownership and threading: the awaiting task creates it, sets
/// `continuation`, and hands it to the loop through the loop's queue; from
/// then on only the loop thread touches its fields, except
/// `cancelRequested`, which is guarded by the loop's lock. The loop resumes
/// `continuation` exactly once (`finish`).
///
/// Callback lifetime: the write and header callbacks receive
/// `Unmanaged.passUnretained(self)` as userdata. That is safe because the
/// loop's `active` table holds a strong reference from `curl_multi_add_handle`
/// until after `curl_multi_remove_handle`, and libcurl calls them only
/// inside `curl_multi_perform` while the handle is added.
final class CurlTransfer: @unchecked Sendable {
    let id: UInt64
    let spec: TransferSpec
    var continuation: CheckedContinuation<AttemptOutcome, Never>?
    /// Guarded by the loop's lock.
    var cancelRequested = false

    // Loop-thread state.
    var easy: UnsafeMutableRawPointer?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var headers: [HTTPHeaders.Field] = []
    var bodyStatusChecked = false
    var deliverBody = false
    var bodyBytes: Int64 = 0
    var exceededMaxSize = false
    var sinkError: Error?
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init(id: UInt64, spec: TransferSpec) {
        self.id = id
        self.spec = spec
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    /// Resumes the awaiting task; a second call is a no-op.
    func finish(_ outcome: AttemptOutcome) {
        guard let continuation else { return }
        self.continuation = nil
        continuation.resume(returning: outcome)
    }

    var curlErrorText: String {
        let text = String(cString: errorBuffer)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    /// Sets every option for this attempt. Each setopt result is checked: a
    /// failure means this libcurl lacks something we rely on.
    func configure(_ easy: UnsafeMutableRawPointer) -> FetchError? {
        let config = spec.configuration
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        var failed: (String, CURLcode)?
        func check(_ name: String, _ rc: CURLcode) {
            if rc != CURLE_OK && failed == nil { failed = (name, rc) }
        }
        check("URL", ccurl_easy_setopt_string(easy, CURLOPT_URL, spec.url))
        check("PROTOCOLS_STR", ccurl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        check("REDIR_PROTOCOLS_STR", ccurl_easy_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        check("FOLLOWLOCATION", ccurl_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1))
        check("MAXREDIRS", ccurl_easy_setopt_long(easy, CURLOPT_MAXREDIRS, config.maxRedirects))
        check("NOSIGNAL", ccurl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        check("CONNECTTIMEOUT_MS", ccurl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(config.connectTimeout)))
        check("TIMEOUT_MS", ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, milliseconds(config.timeout)))
        check("LOW_SPEED_LIMIT", ccurl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, config.lowSpeedLimit))
        check("LOW_SPEED_TIME", ccurl_easy_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, Int(config.lowSpeedTime.rounded(.up)))))
        check("MAXFILESIZE_LARGE", ccurl_easy_setopt_off_t(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(config.maxSize)))
        check("USERAGENT", ccurl_easy_setopt_string(easy, CURLOPT_USERAGENT, config.userAgent))
        check("HTTP_VERSION", ccurl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)))
        check("PIPEWAIT", ccurl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
        check("BUFFERSIZE", ccurl_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, 64 * 1024))
        check("ERRORBUFFER", ccurl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer))
        check("WRITEFUNCTION", ccurl_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteCallback))
        check("WRITEDATA", ccurl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, userdata))
        check("HEADERFUNCTION", ccurl_easy_setopt_data_callback(easy, CURLOPT_HEADERFUNCTION, curlHeaderCallback))
        check("HEADERDATA", ccurl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, userdata))
        if let caFile = config.caFile {
            check("CAINFO", ccurl_easy_setopt_string(easy, CURLOPT_CAINFO, caFile))
        }
        if config.insecure {
            check("SSL_VERIFYPEER", ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0))
            check("SSL_VERIFYHOST", ccurl_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0))
        }
        if config.verboseCurl {
            check("VERBOSE", ccurl_easy_setopt_long(easy, CURLOPT_VERBOSE, 1))
        }
        for line in spec.headerLines {
            guard let list = curl_slist_append(headerList, line) else {
                return FetchError(.network, url: spec.url, detail: "out of memory building request headers")
            }
            headerList = list
        }
        if let headerList {
            check("HTTPHEADER", ccurl_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList))
        }
        if let (name, rc) = failed {
            return FetchError(.network, url: spec.url, curlCode: Int(rc.rawValue),
                              curlMessage: "setting CURLOPT_\(name): " + curlDescription(rc))
        }
        return nil
    }

    /// Reads the result of a finished attempt off its handle.
    func outcome(code: CURLcode, easy: UnsafeMutableRawPointer) -> AttemptOutcome {
        if code != CURLE_OK {
            return .failure(error(for: code))
        }
        var status = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var redirects = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_REDIRECT_COUNT, &redirects)
        var version = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        var effective: UnsafePointer<CChar>?
        _ = ccurl_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &effective)
        var lookup = 0.0, connect = 0.0, firstByte = 0.0, total = 0.0
        _ = ccurl_easy_getinfo_double(easy, CURLINFO_NAMELOOKUP_TIME, &lookup)
        _ = ccurl_easy_getinfo_double(easy, CURLINFO_CONNECT_TIME, &connect)
        _ = ccurl_easy_getinfo_double(easy, CURLINFO_STARTTRANSFER_TIME, &firstByte)
        _ = ccurl_easy_getinfo_double(easy, CURLINFO_TOTAL_TIME, &total)
        let versionText: String
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): versionText = "1.0"
        case Int(CURL_HTTP_VERSION_2_0): versionText = "2"
        case Int(CURL_HTTP_VERSION_3): versionText = "3"
        default: versionText = "1.1"
        }
        return .response(AttemptResponse(
            status: status, headers: HTTPHeaders(headers), bodyBytes: bodyBytes,
            effectiveURL: redactURL(effective.map { String(cString: $0) } ?? spec.url),
            redirects: redirects, httpVersion: versionText,
            timings: .init(nameLookup: lookup, connect: connect, firstByte: firstByte, total: total)))
    }

    private func error(for code: CURLcode) -> FetchError {
        let curlCode = Int(code.rawValue)
        let text = curlErrorText.isEmpty ? curlDescription(code) : curlErrorText
        if code == CURLE_WRITE_ERROR || code == CURLE_FILESIZE_EXCEEDED {
            if exceededMaxSize || code == CURLE_FILESIZE_EXCEEDED {
                return FetchError(.tooLarge, url: spec.url, curlCode: curlCode, curlMessage: text,
                                  detail: "larger than the \(spec.configuration.maxSize)-byte limit")
            }
            if let sinkError {
                let detail = (sinkError as? FetchError)?.detail ?? String(describing: sinkError)
                return FetchError(.io, url: spec.url, curlCode: curlCode, curlMessage: text, detail: detail)
            }
        }
        return FetchError(FetchError.Kind(curlCode: code), url: spec.url, curlCode: curlCode, curlMessage: text)
    }
}

private func milliseconds(_ seconds: Double) -> Int {
    seconds <= 0 ? 0 : max(1, Int((seconds * 1000).rounded()))
}

/// CURLOPT_WRITEFUNCTION. Returning less than asked aborts the transfer
/// (libcurl then reports CURLE_WRITE_ERROR, which `outcome` explains).
private let curlWriteCallback: ccurl_data_callback = { data, size, count, userdata in
    guard let userdata, let data else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    if !transfer.bodyStatusChecked, let easy = transfer.easy {
        var status = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        transfer.deliverBody = (200..<300).contains(status)
        transfer.bodyStatusChecked = true
    }
    // Bodies of error responses are not wanted by anyone: drop them.
    guard transfer.deliverBody else { return length }
    if transfer.bodyBytes + Int64(length) > transfer.spec.configuration.maxSize {
        transfer.exceededMaxSize = true
        return 0
    }
    do {
        try transfer.spec.sink.write(UnsafeRawBufferPointer(start: data, count: length))
    } catch {
        transfer.sinkError = error
        return 0
    }
    transfer.bodyBytes += Int64(length)
    return length
}

/// CURLOPT_HEADERFUNCTION: collects the fields of the latest response (a
/// status line starts a new one, so redirects and 100-continue are dropped).
private let curlHeaderCallback: ccurl_data_callback = { data, size, count, userdata in
    guard let userdata, let data else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    let line = UnsafeRawBufferPointer(start: data, count: length)
    guard let parsed = parseHeaderLine(line) else {
        if length >= 5, line.starts(with: "HTTP/".utf8) {
            transfer.headers.removeAll(keepingCapacity: true)
            transfer.bodyStatusChecked = false
        }
        return length
    }
    transfer.headers.append(parsed)
    return length
}

/// "Name: value\r\n" → (Name, value); nil for status lines and the blank line.
func parseHeaderLine(_ line: UnsafeRawBufferPointer) -> HTTPHeaders.Field? {
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return nil }
    if line.starts(with: "HTTP/".utf8) { return nil }
    let name = String(decoding: line[..<colon], as: UTF8.self)
    var start = colon + 1
    var end = line.count
    while start < end, line[start] == 0x20 || line[start] == 0x09 { start += 1 }
    while end > start, line[end - 1] == 0x0A || line[end - 1] == 0x0D || line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
    let value = String(decoding: line[start..<end], as: UTF8.self)
    return (name: name, value: value)
}
