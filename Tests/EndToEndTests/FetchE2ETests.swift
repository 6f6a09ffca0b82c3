import Foundation
import Testing
import TestSupport

extension CLI {
    /// `run` on a thread of its own: a test waiting seconds for a child must
    /// not hold one of the few cooperative threads other tests need.
    func runOffPool(_ arguments: [String], environment: [String: String] = [:]) async throws -> ProcessResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try self.run(arguments, environment: environment) }) }.start()
        }
    }
}

/// The network behaviour of the built binary: --jobs, limits, retries,
/// redirects, TLS, proxies and request headers, against local servers.
@Suite struct FetchE2ETests {
    static let png: [UInt8] = {
        FixtureSite.png
    }()

    /// The terminal JSON object of `url` (the last line about it).
    static func terminal(_ result: ProcessResult, _ url: String) -> [String: Any]? {
        CLI.jsonLines(result.stdout)?.last { $0["url"] as? String == url }
    }

    static func error(_ result: ProcessResult, _ url: String) -> [String: Any]? {
        terminal(result, url)?["error"] as? [String: Any]
    }

    /// Regular files anywhere below the cache directory (bodies, metadata, temporaries).
    static func storedFiles(_ cli: CLI) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: cli.cacheDir) else { return [] }
        return walker.compactMap { $0 as? String }.filter { relative in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: cli.cacheDir + "/" + relative, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
    }

    @Test func jobsBoundsConcurrentTransfers() async throws {
        let server = try ScriptedServer()
        server.route("/slow.png", ScriptedResponse.ok(Self.png).delayed(0.25))
        let urls = (0..<20).map { server.url("/slow.png?n=\($0)") }
        let cli = try CLI()
        let result = try await cli.runOffPool(["--jobs", "4", "--json"] + urls)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(urls.allSatisfy { Self.terminal(result, $0)?["phase"] as? String == "success" })
        #expect(server.requestCount("/slow.png") == 20)
        #expect(server.maxConcurrentRequests <= 4, "--jobs 4 but \(server.maxConcurrentRequests) requests at once")
        #expect(server.maxConcurrentRequests >= 2, "transfers ran one by one")
        #expect(server.connectionsAccepted <= 4, "\(server.connectionsAccepted) connections for 4 jobs")
    }

    @Test func aTruncatedBodyFailsAndNothingIsCached() async throws {
        let server = try ScriptedServer()
        var lie = ScriptedResponse.ok(Self.png)
        lie.declaredLength = Self.png.count + 1000
        server.route("/short.png", lie)
        let url = server.url("/short.png")
        let cli = try CLI()
        let result = try await cli.runOffPool(["--json", url])
        #expect(result.status == 1)
        let error = try #require(Self.error(result, url))
        #expect(error["kind"] as? String == "network")
        #expect(error["message"] as? String == "network error: transfer closed with 1000 bytes remaining to read")
        let path = try await cli.runOffPool(["cache", "path", url])
        #expect(path.status == 1, "a partial body must not be stored")
        #expect(Self.storedFiles(cli).isEmpty, "left in the cache: \(Self.storedFiles(cli))")
    }

    @Test func aHugeBodyIsRefusedUnderMaxSizeAndNothingIsCached() async throws {
        let server = try ScriptedServer()
        var huge = ScriptedResponse(status: 200, headers: [("Content-Type", "image/png")])
        huge.generatedBodyLength = 1 << 30
        huge.trickle = (chunk: 256 * 1024, interval: 0.01)   // 40 s for the whole body
        server.route("/huge.png", huge)
        var endless = huge
        endless.omitContentLength = true
        server.route("/endless.png", endless)
        let known = server.url("/huge.png"), streamed = server.url("/endless.png")
        let cli = try CLI()
        let start = Date().timeIntervalSinceReferenceDate
        let result = try await cli.runOffPool(["--json", "--max-size", "1M", known, streamed])
        let elapsed = Date().timeIntervalSinceReferenceDate - start
        #expect(result.status == 1)
        let refused = try #require(Self.error(result, known))
        #expect(refused["kind"] as? String == "too-large")
        #expect(refused["message"] as? String == "response too large: Content-Length 1073741824 exceeds the 1048576-byte limit")
        let aborted = try #require(Self.error(result, streamed))
        #expect(aborted["kind"] as? String == "too-large")
        // Half the 40 s the whole gigabyte takes: a run that read it to the end cannot pass, and a
        // debug build's start on a loaded machine (seconds) cannot fail it.
        #expect(elapsed < 20, "took \(elapsed) s: the server cannot have sent much of its gigabyte")
        #expect(Self.storedFiles(cli).isEmpty, "left in the cache: \(Self.storedFiles(cli))")
    }

    /// `--max-size 0` is no limit, as curl's `--max-filesize 0` and this
    /// tool's `--timeout 0`; before, it refused every body as too-large.
    @Test func maxSizeZeroIsNoLimit() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let cli = try CLI()
        let result = try await cli.runOffPool(["--max-size", "0", server.url("/a.png")])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix("success"), "\(result.stdout)")
    }

    @Test func aSlowFirstByteTimesOut() async throws {
        let server = try ScriptedServer()
        // The answer waits 30 s and the run must end far sooner: 10 s leaves room for a loaded
        // machine (a 5 s delay against a 3 s bound failed once at load 13: 4.1 s for the run).
        server.route("/slow.png", ScriptedResponse.ok(Self.png).delayed(30))
        let url = server.url("/slow.png")
        let cli = try CLI()
        let start = Date().timeIntervalSinceReferenceDate
        let result = try await cli.runOffPool(["--json", "--timeout", "0.5", "--retries", "0", url])
        #expect(Date().timeIntervalSinceReferenceDate - start < 10)
        let error = try #require(Self.error(result, url))
        #expect(error["kind"] as? String == "timeout")
        #expect((error["message"] as? String)?.hasPrefix("timed out: Operation timed out after") == true)
        #expect(Self.terminal(result, url)?["attempts"] as? Int == 1)
    }

    @Test func serverErrorsAreRetriedAndAttemptsReported() async throws {
        let server = try ScriptedServer()
        server.route("/flaky.png", [.status(503), .status(503), .ok(Self.png)])
        let url = server.url("/flaky.png")
        let cli = try CLI()
        let result = try await cli.runOffPool(["--json", url])
        #expect(result.status == 0, "\(result.stdout)")
        #expect(Self.terminal(result, url)?["phase"] as? String == "success")
        #expect(Self.terminal(result, url)?["attempts"] as? Int == 3)

        server.route("/flaky.png", [.status(503), .status(503), .ok(Self.png)])
        let other = try CLI()
        let once = try await other.runOffPool(["--json", "--retries", "0", url])
        #expect(once.status == 1)
        let error = try #require(Self.error(once, url))
        #expect(error["kind"] as? String == "http" && error["status"] as? Int == 503)
        #expect(Self.terminal(once, url)?["attempts"] as? Int == 1)
        #expect(server.requestCount("/flaky.png") == 4)
    }

    @Test func redirectsAreBoundedAndLimitedToHTTP() async throws {
        let server = try ScriptedServer()
        server.route("/loop.png", .redirect(to: "/loop.png"))
        server.route("/passwd.png", .redirect(to: "file:///etc/passwd"))
        let loop = server.url("/loop.png"), passwd = server.url("/passwd.png")
        let cli = try CLI()
        let result = try await cli.runOffPool(["--json", loop, passwd])
        #expect(result.status == 1)
        let tooMany = try #require(Self.error(result, loop))
        #expect(tooMany["kind"] as? String == "redirects")
        #expect(tooMany["message"] as? String == "too many redirects: Maximum (10) redirects followed")
        let scheme = try #require(Self.error(result, passwd))
        #expect(scheme["kind"] as? String == "unsupported-scheme")
        #expect(scheme["message"] as? String == "unsupported scheme: redirect to file:///etc/passwd (only http and https are allowed)")
        #expect(server.requestCount("/loop.png") == 11)
        #expect(Self.storedFiles(cli).isEmpty)
    }

    @Test func tlsIsVerifiedCacertAddsATrustAnchorAndInsecureWarns() async throws {
        let nginx = try NginxServer(root: Paths.fixtures, tls: true)
        let url = nginx.url("/images/red-64x48.png")
        let cli = try CLI()
        let strict = try await cli.runOffPool(["--json", "--retries", "0", url])
        #expect(strict.status == 1)
        let error = try #require(Self.error(strict, url))
        #expect(error["kind"] as? String == "tls")
        #expect((error["message"] as? String)?.contains("certificate") == true, "\(error)")

        let trusted = try await cli.runOffPool(["--json", "--cacert", nginx.certificatePath ?? "", url])
        #expect(trusted.status == 0, "\(trusted.stdout)")
        #expect(Self.terminal(trusted, url)?["source"] as? String == "network")
        #expect(!trusted.stderr.contains("warning"))

        let other = try CLI()
        let insecure = try await other.runOffPool(["--insecure", url])
        #expect(insecure.status == 0)
        #expect(insecure.stderr.contains("warning: --insecure: TLS certificates are not verified"))
        #expect(insecure.stdout.hasPrefix("success  \(url)"))
    }

    @Test func proxiesComeFromTheEnvironment() async throws {
        let proxy = try ScriptedServer()
        proxy.route("/cat.png", .ok(Self.png))
        let url = "http://images.example.invalid/cat.png"   // never resolved: the proxy answers
        let cli = try CLI()
        let viaProxy = try await cli.runOffPool(["--json", url], environment: [
            "http_proxy": proxy.baseURL, "no_proxy": "", "NO_PROXY": "",
        ])
        #expect(viaProxy.status == 0, "\(viaProxy.stdout)\(viaProxy.stderr)")
        let request = try #require(proxy.requests("/cat.png").first)
        #expect(request.header("Host") == "images.example.invalid")
        #expect(request.headerValues("User-Agent").count == 1 && request.headerValues("Accept") == ["*/*"], "\(request.headers)")
        #expect(try await cli.runOffPool(["cache", "path", url]).status == 0)
        // Revalidated: the same proxy, the same Host; a host name in Unicode goes out as the first
        // request's did.
        let again = try await cli.runOffPool(["--json", "--refresh", url], environment: [
            "http_proxy": proxy.baseURL, "no_proxy": "", "NO_PROXY": "",
        ])
        #expect(again.status == 0, "\(again.stdout)\(again.stderr)")
        #expect(proxy.requests("/cat.png").map { $0.header("Host") } == ["images.example.invalid", "images.example.invalid"])
        proxy.route("/fox.png", .ok(Self.png))
        for extra in [[], ["--refresh"]] {
            let unicode = try await cli.runOffPool(["--json"] + extra + ["http://bücher.example.invalid/fox.png"], environment: [
                "http_proxy": proxy.baseURL, "no_proxy": "", "NO_PROXY": "",
            ])
            #expect(unicode.status == 0, "\(unicode.stdout)\(unicode.stderr)")
        }
        let hosts = proxy.requests("/fox.png").map { $0.header("Host") }
        #expect(hosts.count == 2 && hosts[0] == hosts[1], "\(hosts)")

        // Any one of the variables curl reads is enough, the last it falls back to included
        // (a handle is told "no proxy" only when none is set: `ProxyEnvironment`).
        proxy.route("/bird.png", .ok(Self.png))
        let viaAllProxy = try await cli.runOffPool(["--json", "http://images.example.invalid/bird.png"],
                                                   environment: ["ALL_PROXY": proxy.baseURL])
        #expect(viaAllProxy.status == 0, "\(viaAllProxy.stdout)\(viaAllProxy.stderr)")
        #expect(proxy.requestCount("/bird.png") == 1)

        let origin = try ScriptedServer()
        origin.route("/dog.png", .ok(Self.png))
        let direct = try await cli.runOffPool(["--json", origin.url("/dog.png")], environment: [
            "http_proxy": proxy.baseURL, "no_proxy": "127.0.0.1", "NO_PROXY": "127.0.0.1",
        ])
        #expect(direct.status == 0)
        #expect(origin.requestCount("/dog.png") == 1, "no_proxy sends the request straight to the origin")
        #expect(proxy.requestCount("/dog.png") == 0)
    }

    /// An `https` URL goes through an HTTP proxy with `CONNECT`; a proxy that
    /// refuses the tunnel is not the origin answering: no `http` failure with
    /// "HTTP 0" (the proxy's status line was once taken for the origin's).
    @Test func aProxyRefusingTheTunnelIsNotAnHTTPStatusOfTheOrigin() async throws {
        let proxy = try ScriptedServer()
        proxy.route("images.example.invalid:443", ScriptedResponse.status(403))
        let url = "https://images.example.invalid/cat.png"   // never resolved: the proxy answers
        let result = try await CLI().runOffPool(["--json", "--retries", "0", url], environment: [
            "https_proxy": proxy.baseURL, "no_proxy": "", "NO_PROXY": "",
        ])
        #expect(result.status == 1)
        #expect(proxy.requests("images.example.invalid:443").first?.method == "CONNECT")
        // The tunnel's CONNECT names the tool: the User-Agent is libcurl's CURLOPT_USERAGENT, which
        // the CONNECT carries (a request line of ours would not be there).
        let agent = proxy.requests("images.example.invalid:443").first?.headerValues("User-Agent") ?? []
        #expect(agent.count == 1 && agent[0].hasPrefix("asyncfetch/"), "\(agent)")
        let error = try #require(Self.error(result, url), "\(result.stdout)")
        #expect(error["kind"] as? String == "network", "\(error)")
        #expect(error["status"] == nil, "\(error)")
        #expect((error["message"] as? String)?.contains("CONNECT tunnel failed, response 403") == true, "\(error)")
    }

    /// A proxy that refuses connections was reported as "could not connect:
    /// Failed to connect to 127.0.0.1 port N", the proxy's address with no
    /// word that it is the proxy's, beside a URL whose host was never
    /// contacted. The message names the proxy and its variable, never its
    /// user name or password; a URL that no_proxy sends direct says nothing
    /// of a proxy.
    @Test func aProxyThatRefusesConnectionsIsNamedWithoutItsCredentials() async throws {
        let closed = try ScriptedServer()
        let port = closed.port
        closed.stop()   // nothing listens there now: connections are refused
        let proxy = "http://agent:s3cret@127.0.0.1:\(port)"
        let url = "http://images.example.invalid/cat.png"   // never resolved: it is the proxy's to reach
        let cli = try CLI()
        let result = try await cli.runOffPool(["--json", "--retries", "0", url], environment: [
            "http_proxy": proxy, "no_proxy": "", "NO_PROXY": "",
        ])
        #expect(result.status == 1)
        let error = try #require(Self.error(result, url), "\(result.stdout)")
        #expect(error["kind"] as? String == "connect", "\(error)")
        let message = error["message"] as? String ?? ""
        #expect(message.hasPrefix("could not connect to the proxy http://127.0.0.1:\(port) (http_proxy): "), "\(message)")
        #expect(!result.stdout.contains("s3cret") && !result.stdout.contains("agent") && !result.stderr.contains("s3cret"),
                "\(result.stdout)\(result.stderr)")
        // The host is given up on after three refusals: -v's note says they were the proxy's.
        let batch = try await cli.runOffPool(["-v", "--retries", "0"] + (1...4).map { "http://images.example.invalid/\($0).png" },
                                             environment: ["http_proxy": proxy, "no_proxy": "", "NO_PROXY": ""])
        #expect(batch.stderr.contains("host images.example.invalid gave 3 connect failures in a row through the proxy "
                                      + "http://127.0.0.1:\(port) (http_proxy); not tried again in this run"),
                "\(batch.stderr)")
        #expect(!batch.stderr.contains("s3cret") && !batch.stdout.contains("s3cret"))

        let direct = try await cli.runOffPool(["--json", "--retries", "0", "http://127.0.0.1:\(port)/cat.png"], environment: [
            "http_proxy": "http://127.0.0.1:9", "no_proxy": "localhost,127.0.0.1", "NO_PROXY": "",
        ])
        let straight = try #require(Self.error(direct, "http://127.0.0.1:\(port)/cat.png"), "\(direct.stdout)")
        #expect((straight["message"] as? String)?.hasPrefix("could not connect: Failed to connect to 127.0.0.1 port \(port)") == true,
                "\(straight)")
    }

    @Test func headersAreAddedAndTheUserAgentNamesTheVersion() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let cli = try CLI()
        let version = try await cli.runOffPool(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try await cli.runOffPool(["-H", "X-Token: abc 123", "--header", "Accept: image/png", server.url("/a.png")])
        #expect(result.status == 0)
        let request = try #require(server.requests("/a.png").first)
        #expect(request.header("X-Token") == "abc 123")
        #expect(request.headerValues("Accept") == ["image/png"])
        #expect(request.header("User-Agent") == "asyncfetch/\(version)")
        #expect(!version.isEmpty)
        // As curl: 'Name;' sends an empty value; 'Name:' sends no such header, the defaults included;
        // so does 'Name; ' (a blank after the semicolon: curl 7.88.1 --compressed sends no Accept-Encoding for 'Accept-Encoding; ').
        server.route("/b.png", .ok(Self.png))
        let empty = try await cli.runOffPool(["-H", "X-Empty;", "-H", "Accept:", "-H", "User-Agent:", "-H", "X-Blank; ",
                                              "-H", "Accept-Encoding; ", server.url("/b.png")])
        #expect(empty.status == 0, "\(empty.stderr)")
        let sent = try #require(server.requests("/b.png").first)
        #expect(sent.headerValues("X-Empty") == [""])
        #expect(sent.headerValues("Accept").isEmpty && sent.headerValues("User-Agent").isEmpty, "\(sent.headers)")
        #expect(sent.headerValues("X-Blank").isEmpty && sent.headerValues("Accept-Encoding").isEmpty, "\(sent.headers)")
    }

    /// Every request of a run, the remote cache tier's included, names the
    /// tool and its version; `--user-agent` replaces that everywhere.
    @Test func userAgentIsSentOnEveryRequestAndTheOptionReplacesIt() async throws {
        let origin = try ScriptedServer()
        origin.route("/a.png", .ok(Self.png))
        origin.route("/b.png", .ok(Self.png))
        let tier = try ScriptedServer()   // no routes: every lookup is a 404 (a miss), every upload too
        let cli = try CLI()
        let version = try await cli.runOffPool(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let plain = try await cli.runOffPool(["--remote-cache", tier.url("/cache/"), origin.url("/a.png")])
        #expect(plain.status == 0, "\(plain.stderr)")
        let chosen = "probe/2.5 (+https://example.invalid/bot)"
        let custom = try await cli.runOffPool(["--user-agent", chosen, "--remote-cache", tier.url("/cache/"), origin.url("/b.png")])
        #expect(custom.status == 0, "\(custom.stderr)")
        #expect(origin.requests("/a.png").map { $0.headerValues("User-Agent") } == [["asyncfetch/\(version)"]])
        #expect(origin.requests("/b.png").map { $0.headerValues("User-Agent") } == [[chosen]])
        let tierAgents = tier.allRequests.map { $0.headerValues("User-Agent") }
        #expect(tierAgents.contains(["asyncfetch/\(version)"]), "\(tierAgents)")
        #expect(tierAgents.contains([chosen]), "\(tierAgents)")
        #expect(tierAgents.allSatisfy { $0 == ["asyncfetch/\(version)"] || $0 == [chosen] }, "\(tierAgents)")
        // A header given with -H still wins over both.
        origin.route("/c.png", .ok(Self.png))
        let header = try await cli.runOffPool(["--user-agent", chosen, "-H", "User-Agent: by-header", origin.url("/c.png")])
        #expect(header.status == 0)
        #expect(origin.requests("/c.png").map { $0.headerValues("User-Agent") } == [["by-header"]])
    }

    /// SPEC §5: `--retries N` retries N times, 429 and 503 included: a URL
    /// whose host keeps pushing back makes N + 1 requests, not N + 2 (the
    /// wait for the paused host is the retry, not a free extra attempt).
    @Test(arguments: [(429, 0), (503, 1), (503, 2)])
    func retriesCountEveryRequestAfterThePushback(status: Int, retries: Int) async throws {
        let server = try ScriptedServer()
        server.route("/busy.png", .status(status))
        let cli = try CLI()
        let result = try await cli.run([server.url("/busy.png"), "--retries", String(retries), "--json"])
        #expect(result.status == 1)
        let failure = try #require(try HTTPCachingE2ETests.json(result).first { $0["phase"] as? String == "failure" })
        #expect(failure["attempts"] as? Int == retries + 1, "\(failure)")
        #expect(server.requestCount("/busy.png") == retries + 1)
    }

    /// An internationalised host name (`http://bücher.example/…`) was an
    /// invalid-url "URL using bad/illegal format or missing URL": libcurl
    /// converts it to `xn--bcher-kva.example` with libidn2 in the LC_CTYPE
    /// character set, and the process ran in the C locale. curl itself
    /// fetches it. Checked through a proxy (no DNS), in `LC_ALL=C` as cron has it.
    @Test func anInternationalisedHostNameIsFetched() throws {
        let proxy = try ScriptedServer()
        proxy.route("/a.png", .ok(FixtureSite.png, headers: [("Content-Type", "image/png"), ("Cache-Control", "max-age=600")]))
        let cli = try CLI()
        let url = "http://bücher.example/a.png"
        let environment = ["http_proxy": proxy.baseURL, "no_proxy": "", "NO_PROXY": "", "LC_ALL": "C", "LANG": "C"]
        let result = try cli.run(["--json", url], environment: environment)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let request = try #require(proxy.requests("/a.png").first)
        #expect(request.header("Host") == "xn--bcher-kva.example")
        let lines = try #require(CLI.jsonLines(result.stdout), "\(result.stdout)")
        #expect(lines.contains { $0["url"] as? String == url && $0["source"] as? String == "network" }, "\(lines)")
        // The key is the MD5 of the URL as given (SPEC §4: already normalised).
        let path = try cli.run(["cache", "path", url], environment: ["LC_ALL": "C"])
        #expect(path.stdout == cli.cacheDir + "/" + (try CLI.md5sum(url)) + "\n", "\(path.stdout)\(path.stderr)")
    }
}
