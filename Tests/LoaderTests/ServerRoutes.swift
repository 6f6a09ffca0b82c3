import Fetch
import Support
import TestSupport

extension ScriptedServer {
    /// A resource with a validator: 200 with `body`, `headers` and `ETag: etag`
    /// (and `Last-Modified` if given); 304 with `notModified` headers when
    /// the request's `If-None-Match` names the current ETag.
    func revalidating(_ path: String, body: [UInt8] = LoaderHarness.png, etag: String = "\"v1\"",
                      lastModified: String? = nil, headers: [(String, String)] = [],
                      notModified: [(String, String)] = []) {
        route(path) { request in
            if request.header("If-None-Match") == etag {
                return .notModified(headers: [("ETag", etag)] + notModified)
            }
            var all = headers + [("ETag", etag)]
            if let lastModified { all.append(("Last-Modified", lastModified)) }
            return .ok(body, headers: all)
        }
    }

    /// How many requests to `path` carried a conditional header.
    func conditionalRequests(_ path: String) -> Int {
        requests(path).filter { $0.header("If-None-Match") != nil || $0.header("If-Modified-Since") != nil }.count
    }
}

/// HTTP dates relative to now, for `Date` and `Expires`.
func httpDate(_ offset: Double) -> String { HTTPDate.format(currentUnixTime() + offset) }
