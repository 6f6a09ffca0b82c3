import Foundation
import Testing
import TestSupport

/// A proxy's own failures are named as the proxy's, in each URL's message and
/// in `-v`'s note of a host given up on: a proxy name that does not resolve
/// was "host images.example.invalid did not resolve" (a host nobody looked
/// up), and a proxy that never answered was "timed out", naming nothing.
@Suite struct ProxyFailureE2ETests {
    static func failure(_ result: ProcessResult, _ url: String) -> [String: Any]? {
        (CLI.jsonLines(result.stdout) ?? []).first { $0["url"] as? String == url && $0["phase"] as? String == "failure" }?["error"]
            as? [String: Any]
    }

    @Test func aProxyNameThatDoesNotResolveIsTheProxysNotTheHosts() async throws {
        let cli = try CLI()
        let proxy = "http://agent:s3cret@proxy.asyncfetch-test.invalid:3128"
        let environment = ["http_proxy": proxy, "no_proxy": "", "NO_PROXY": ""]
        let url = "http://images.example.invalid/cat.png"
        let one = try await cli.runOffPool(["--json", "--retries", "0", url], environment: environment)
        #expect(one.status == 1)
        let error = try #require(Self.failure(one, url), "\(one.stdout)")
        #expect(error["kind"] as? String == "dns", "\(error)")
        #expect(error["message"] as? String == "could not resolve the proxy http://proxy.asyncfetch-test.invalid:3128 (http_proxy)",
                "\(error)")

        let urls = (1...3).map { "http://images.example.invalid/\($0).png" }
        let batch = try await cli.runOffPool(["-v", "--retries", "0"] + urls, environment: environment)
        #expect(batch.status == 1)
        #expect(batch.stderr.contains("asyncfetch: the proxy http://proxy.asyncfetch-test.invalid:3128 (http_proxy) did not resolve; "
                                      + "host images.example.invalid not tried again in this run"), "\(batch.stderr)")
        #expect(!batch.stderr.contains("host images.example.invalid did not resolve"), "\(batch.stderr)")
        // The URLs after the first fail with that sentence, not "could not resolve host: the proxy …".
        #expect(batch.stdout.contains("/2.png  the proxy http://proxy.asyncfetch-test.invalid:3128 (http_proxy) did not resolve; "
                                      + "host images.example.invalid not tried again in this run"), "\(batch.stdout)")
        #expect(!batch.stdout.contains("could not resolve host"), "\(batch.stdout)")
        #expect(!(batch.stdout + batch.stderr).contains("s3cret"))
    }

    /// The second URL of a name that did not resolve said "could not resolve
    /// host: host nonexistent.invalid did not resolve; …": the give-up's sentence alone now.
    @Test func aHostGivenUpOnAfterItsLookupIsSaidOnce() async throws {
        let cli = try CLI()
        let urls = ["http://asyncfetch-none.invalid/a.png", "http://asyncfetch-none.invalid/b.png"]
        let result = try await cli.runOffPool(["--json", "--retries", "0"] + urls)
        #expect(result.status == 1)
        let messages = urls.map { Self.failure(result, $0)?["message"] as? String ?? "" }
        #expect(messages.sorted() == ["could not resolve host: asyncfetch-none.invalid",
                                      "host asyncfetch-none.invalid did not resolve; not tried again in this run"], "\(messages)")
    }

    @Test func aProxyThatNeverAnswersIsNamedInTheTimeout() async throws {
        let silent = try FullBacklogListener(fillBacklog: false)   // accepts, never answers
        let cli = try CLI()
        let environment = ["http_proxy": "http://127.0.0.1:\(silent.port)", "no_proxy": "", "NO_PROXY": ""]
        let urls = (1...4).map { "http://images.example.invalid/\($0).png" }
        let result = try await cli.runOffPool(["--json", "--retries", "0", "--timeout", "1"] + urls, environment: environment)
        #expect(result.status == 1)
        let error = try #require(Self.failure(result, urls[0]), "\(result.stdout)")
        #expect(error["kind"] as? String == "timeout", "\(error)")
        let message = error["message"] as? String ?? ""
        #expect(message.hasPrefix("no answer in time through the proxy http://127.0.0.1:\(silent.port) (http_proxy): "), "\(message)")
        // The host's give-up, which the fourth URL reports, names the proxy too.
        let givenUp = try #require(Self.failure(result, urls[3]), "\(result.stdout)")
        #expect((givenUp["message"] as? String)?.contains(
            "host images.example.invalid gave 3 timeouts in a row through the proxy http://127.0.0.1:\(silent.port) (http_proxy); "
                + "not tried again in this run") == true, "\(givenUp)")
    }

    /// Whose failure it is, the proxy's or the origin's, is decided when the
    /// attempt fails (`FetchError.proxy`): a timeout is the proxy's while
    /// nothing came back through it — no status line, no answer to a
    /// `CONNECT` — and the origin's once the proxy relayed a status line or
    /// opened the tunnel. Each pair here times out the same way, once with a
    /// proxy that never answers and once with one that answered for an
    /// origin that then went silent; only the first may name the proxy.
    @Test(arguments: ["http", "https"]) func aTimeoutPastTheProxyIsTheOriginsNotTheProxys(scheme: String) async throws {
        let silent = try FullBacklogListener(fillBacklog: false)   // accepts, never answers
        let relaying = try ScriptedServer()
        // Through a plain http proxy: the origin's status line and headers, then a body that stops.
        var stalled = ScriptedResponse.ok(FixtureSite.png)
        stalled.declaredLength = FixtureSite.png.count + 1_000
        stalled.stallAfterBody = 20
        relaying.route("/cat.png", stalled)
        // Over https: the tunnel opened, then nothing from the origin (not even its TLS handshake).
        var tunnel = ScriptedResponse(status: 200)
        tunnel.stallAfterBody = 20
        relaying.route("images.example.invalid:443", tunnel)
        let cli = try CLI()
        let url = "\(scheme)://images.example.invalid/cat.png"
        let variable = scheme + "_proxy"
        func failure(through proxy: Int, timeout: String) async throws -> (kind: String?, message: String) {
            let result = try await cli.runOffPool(["--json", "--retries", "0", "--timeout", timeout, url],
                                                  environment: [variable: "http://127.0.0.1:\(proxy)", "no_proxy": "", "NO_PROXY": ""])
            #expect(result.status == 1)
            let error = try #require(Self.failure(result, url), "\(result.stdout)\(result.stderr)")
            return (error["kind"] as? String, error["message"] as? String ?? "")
        }
        let proxys = try await failure(through: silent.port, timeout: "1")
        #expect(proxys.kind == "timeout", "\(proxys)")
        #expect(proxys.message.hasPrefix("no answer in time through the proxy http://127.0.0.1:\(silent.port) (\(variable)): "),
                "\(proxys.message)")
        // 2 s: the relayed answer has to come before the timeout, even on a machine under load.
        let origins = try await failure(through: relaying.port, timeout: "2")
        #expect(origins.kind == "timeout", "\(origins)")
        #expect(!origins.message.contains("proxy"), "the proxy answered; the origin did not: \(origins.message)")
        #expect(relaying.requestCount(scheme == "http" ? "/cat.png" : "images.example.invalid:443") == 1,
                "the answer came through the proxy: \(relaying.allRequests.map(\.path))")
    }
}
