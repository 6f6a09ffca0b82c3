import Testing
@testable import Fetch

/// Which proxy libcurl 7.88 takes from the environment for a URL, as a
/// connect failure names it (`FetchError.message`).
@Suite struct ProxyEnvironmentTests {
    @Test func theSchemesVariableThenAllProxyAndNeverHTTPProxyInCapitals() {
        #expect(ProxyEnvironment.proxy(for: "http://a.example/x", environment: ["http_proxy": "http://p:3128"]) == "http://p:3128 (http_proxy)")
        #expect(ProxyEnvironment.proxy(for: "http://a.example/x", environment: ["HTTP_PROXY": "http://p:3128"]) == nil)
        #expect(ProxyEnvironment.proxy(for: "https://a.example/x", environment: ["HTTPS_PROXY": "p:3128"]) == "p:3128 (HTTPS_PROXY)")
        #expect(ProxyEnvironment.proxy(for: "https://a.example/x", environment: ["http_proxy": "http://p:3128"]) == nil)
        #expect(ProxyEnvironment.proxy(for: "HTTPS://a.example/x", environment: ["https_proxy": "http://p", "all_proxy": "http://q"])
                == "http://p (https_proxy)")
        #expect(ProxyEnvironment.proxy(for: "http://a.example/x", environment: ["ALL_PROXY": "socks5://q:1080"]) == "socks5://q:1080 (ALL_PROXY)")
        #expect(ProxyEnvironment.proxy(for: "http://a.example/x", environment: ["http_proxy": "", "all_proxy": "http://q"])
                == "http://q (all_proxy)", "an empty variable is one not set (curl_getenv)")
        #expect(ProxyEnvironment.proxy(for: "http://a.example/x", environment: [:]) == nil)
    }

    @Test func credentialsAreNeverShown() {
        let shown = ProxyEnvironment.proxy(for: "http://a.example/x", environment: ["http_proxy": "http://user:pa@ss@p.internal:8080/"])
        #expect(shown == "http://p.internal:8080/ (http_proxy)")
        #expect(ProxyEnvironment.proxy(for: "http://a.example/x", environment: ["http_proxy": "user:pw@p:1"]) == "p:1 (http_proxy)")
        // A password with an unencoded '#', '/' or '?' (libcurl cannot read the value: "could not resolve the proxy").
        for password in ["p#ss", "p/ss", "p?ss", "a@b#c"] {
            let shown = ProxyEnvironment.proxy(for: "http://a.example/x", environment: ["http_proxy": "http://agent:\(password)@proxy:3128"])
            #expect(shown == "http://proxy:3128 (http_proxy)", "\(password)")
        }
    }

    @Test func noProxyEntriesMatchHostsDomainsAndAddresses() {
        let env = ["http_proxy": "http://p:1", "no_proxy": " .example.com, localhost 10.0.0.0/8,[::1]"]
        for direct in ["http://example.com/x", "http://img.EXAMPLE.com./x", "http://localhost:8080/x", "http://10.2.3.4/x",
                       "http://u:p@img.example.com/x", "http://[::1]:8080/x"] {
            #expect(ProxyEnvironment.proxy(for: direct, environment: env) == nil, "\(direct)")
        }
        for proxied in ["http://notexample.com/x", "http://example.com.evil/x", "http://11.0.0.1/x", "http://local/x", "http://[::2]/x"] {
            #expect(ProxyEnvironment.proxy(for: proxied, environment: env) == "http://p:1 (http_proxy)", "\(proxied)")
        }
        #expect(ProxyEnvironment.proxy(for: "http://x/", environment: ["http_proxy": "http://p:1", "NO_PROXY": "*"]) == nil)
        // An address is not a domain: "3.4" names no 10.2.3.4, though "2.3.4" ends it after a dot.
        #expect(ProxyEnvironment.proxy(for: "http://10.2.3.4/x", environment: ["http_proxy": "http://p:1", "no_proxy": "3.4"])
                == "http://p:1 (http_proxy)")
        #expect(ProxyEnvironment.proxy(for: "http://x/", environment: ["http_proxy": "http://p:1", "no_proxy": "", "NO_PROXY": "*"]) == nil,
                "an empty no_proxy is one not set")
    }
}
