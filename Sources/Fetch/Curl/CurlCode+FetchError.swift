import CCurl

extension FetchError.Kind {
    /// The one place libcurl result codes become error kinds. Cancellation is
    /// handled before this (a removed handle never reaches it); an aborted
    /// write is decided by the transfer, which knows why it aborted.
    init(curlCode code: CURLcode) {
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL: self = .unsupportedScheme
        case CURLE_URL_MALFORMAT: self = .invalidURL
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: self = .dns
        case CURLE_COULDNT_CONNECT: self = .connect
        case CURLE_OPERATION_TIMEDOUT: self = .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
             CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CRL_BADFILE,
             CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
            self = .tls
        case CURLE_TOO_MANY_REDIRECTS: self = .redirects
        case CURLE_FILESIZE_EXCEEDED: self = .tooLarge
        case CURLE_ABORTED_BY_CALLBACK: self = .cancelled
        case CURLE_WRITE_ERROR: self = .io
        default: self = .network
        }
    }
}

/// libcurl's own sentence for a result code.
func curlDescription(_ code: CURLcode) -> String {
    String(cString: curl_easy_strerror(code))
}
