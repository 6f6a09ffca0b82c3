import Foundation
import Testing
import TestSupport

/// HTTP caching through the built binary, as a user runs it: against the
/// scripted server and a real nginx.
@Suite struct HTTPCachingE2ETests {
    static let png = FixtureSite.png

    static func json(_ result: ProcessResult) throws -> [[String: Any]] {
        try #require(CLI.jsonLines(result.stdout), "stdout: \(result.stdout)")
    }

    /// The `source` of `url`'s success in a `--json` run with `extra` arguments (nil when it did not succeed).
    static func source(_ cli: CLI, _ url: String, _ extra: [String]) throws -> String? {
        try json(try cli.run([url, "--json"] + extra)).first { $0["phase"] as? String == "success" }?["source"] as? String
    }

    static func summary(_ lines: [[String: Any]]) -> [String: Any] {
        (lines.last?["summary"] as? [String: Any]) ?? [:]
    }

    @Test func aNoStoreResponseIsWrittenWithOutputButNeverStored() throws {
        let server = try ScriptedServer()
        server.route("/private.png", .ok(Self.png, headers: [("Cache-Control", "no-store")]))
        let cli = try CLI()
        let url = server.url("/private.png")
        let file = cli.cache.file("out.png")
        let saved = try cli.run([url, "-o", file])
        #expect(saved.status == 0, "\(saved.stderr)")
        #expect(saved.stdout.contains("(not stored: no-store)"))
        #expect(try Array(Data(contentsOf: URL(fileURLWithPath: file))) == Self.png)
        #expect(!FileManager.default.fileExists(atPath: cli.cacheDir + "/" + (try CLI.md5sum(url))))

        let piped = try cli.run([url, "-o", "-"])
        #expect(piped.status == 0)
        #expect(piped.stdoutBytes == Self.png, "-o - writes only the body to stdout")
        #expect(piped.stderr.contains("success"))
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: cli.cacheDir + "/.tmp")) ?? []
        #expect(leftovers.isEmpty, "\(leftovers)")
        #expect(server.requestCount("/private.png") == 2)

        // A stored body is written with -o too, from the network and then from the cache.
        server.route("/public.png", .ok(Self.png, headers: [("Cache-Control", "max-age=600")]))
        for name in ["first.png", "second.png"] {
            let copy = try cli.run([server.url("/public.png"), "-o", cli.cache.file(name)])
            #expect(copy.status == 0)
            #expect(try Array(Data(contentsOf: URL(fileURLWithPath: cli.cache.file(name)))) == Self.png)
        }
        #expect(server.requestCount("/public.png") == 1)
    }

    @Test func nginxRevalidationIsReportedAsRevalidated() throws {
        let nginx = try NginxServer(root: Paths.fixtures)
        let cli = try CLI()
        let url = nginx.url("/images/photo-120x80.jpg")
        #expect(try cli.run([url]).status == 0)
        let cached = try Self.json(try cli.run([url, "--json"]))
        #expect(cached.first?["source"] as? String == "cache")
        for flags in [["--max-age", "0"], ["--refresh"], ["--default-ttl", "0", "--no-heuristic"]] {
            let result = try cli.run([url, "--json"] + flags)
            #expect(result.status == 0)
            let lines = try Self.json(result)
            #expect(lines.map { $0["phase"] as? String } == ["loading", "success", nil], "\(flags)")
            #expect(lines[1]["source"] as? String == "revalidated" && lines[1]["width"] as? Int == 120, "\(flags)")
            #expect(Self.summary(lines)["revalidated"] as? Int == 1)
        }
        var log: [Int] = []
        for _ in 0..<100 {
            log = nginx.accessLog().map(\.status)
            if log.count >= 4 { break }
            usleep(10_000)
        }
        #expect(log == [200, 304, 304, 304])
    }

    @Test func aRemembered404IsReplayedWithoutTheNetwork() throws {
        let server = try ScriptedServer()
        server.route("/dead.png", .status(404, headers: [("Cache-Control", "max-age=3600")], body: "gone"))
        let cli = try CLI()
        let url = server.url("/dead.png")
        #expect(try cli.run([url]).status == 1)
        let human = try cli.run([url])
        #expect(human.status == 1)
        #expect(human.stdout.contains("failure  \(url)  HTTP 404 Not Found (remembered)"))
        let lines = try Self.json(try cli.run([url, "--json"]))
        #expect(lines.first?["phase"] as? String == "failure" && lines.first?["source"] as? String == "cache")
        #expect((lines.first?["error"] as? [String: Any])?["kind"] as? String == "http")
        #expect(server.requestCount("/dead.png") == 1)
        // The cache commands say what is there: an answer without a body, not "not cached".
        let path = try cli.run(["cache", "path", url])
        #expect(path.status == 1 && path.stdout == "-\n")
        #expect(path.stderr == "asyncfetch: \(url): cached as HTTP 404 Not Found, no body\n")
        let pathJSON = try Self.json(try cli.run(["cache", "path", "--json", url]))
        #expect(pathJSON.first?["cached"] as? Bool == false && pathJSON.first?["reason"] as? String == "no-body")
        #expect(pathJSON.first?["status"] as? Int == 404)
        let list = try cli.run(["cache", "list"])
        #expect(list.stdout.contains("HTTP 404") && list.stdout.contains(url), "\(list.stdout)")
        #expect(try Self.json(try cli.run(["cache", "stats", "--json"])).first?["entries"] as? Int == 1)
        #expect(try cli.run([url, "--refresh"]).status == 1)
        #expect(server.requestCount("/dead.png") == 2)
        let removed = try cli.run(["cache", "rm", url])
        #expect(removed.status == 0 && removed.stdout == "removed  \(url)\n")
        #expect(try cli.run(["cache", "path", url]).stderr == "asyncfetch: \(url): not cached\n")
    }

    /// `--max-age` overrides the server's freshness of stored images, but a
    /// remembered error is never served stale (SPEC §5): past the server's
    /// own lifetime it is asked again, whatever `--max-age` allows (before,
    /// `--max-age 1h` replayed a 404 the server had said to keep for 1 s).
    @Test func maxAgeDoesNotReplayARememberedErrorPastTheServersLifetime() throws {
        let server = try ScriptedServer()
        let dated = Self.datedGone(on: server)
        let cli = try CLI()
        let url = server.url("/dead.png")
        #expect(try cli.run([url]).status == 1)
        #expect(server.requestCount("/dead.png") == 1)
        #expect(try cli.run(["cache", "list"]).stdout.contains(url), "the 404 was not remembered")
        HTTPCachingRFCE2ETests.waitForWallClock(Double(dated.value) + 2.1)   // its max-age=2 has run out
        let again = try cli.run([url, "--max-age", "1h", "--offline"])
        #expect(again.status == 1 && again.stdout.contains("empty    \(url)  not cached: a remembered 404 is stale"),
                "\(again.stdout)")
        let asked = try cli.run([url, "--max-age", "1h"])
        #expect(asked.status == 1 && !asked.stdout.contains("(remembered)"), "\(asked.stdout)")
        #expect(server.requestCount("/dead.png") == 2, "asked again, not replayed")
    }

    @Test func staleIfErrorServesTheStoredCopyWithAWarning() throws {
        let server = try ScriptedServer()
        server.route("/flaky.png", [.ok(Self.png, headers: [("Cache-Control", "max-age=0")]), .status(503)])
        let cli = try CLI()
        let url = server.url("/flaky.png")
        #expect(try cli.run([url, "--retries", "0"]).status == 0)
        let failed = try cli.run([url, "--retries", "0"])
        #expect(failed.status == 1 && failed.stdout.contains("HTTP 503"))
        let stale = try cli.run([url, "--retries", "0", "--stale-if-error", "--json"])
        #expect(stale.status == 0)
        let lines = try Self.json(stale)
        #expect(lines.first(where: { $0["phase"] as? String == "success" })?["source"] as? String == "stale")
        #expect(Self.summary(lines)["stale"] as? Int == 1)
        #expect(stale.stderr.contains("warning") && stale.stderr.contains("HTTP 503") && stale.stderr.contains("stale"))
        // --offline serves the stale copy too, but nothing failed: no warning.
        let offline = try cli.run([url, "--offline"])
        #expect(offline.status == 0 && offline.stdout.contains("(stale"))
        #expect(!offline.stderr.contains("warning"))
    }

    @Test func headerOptionsChangeWhatVaryMatches() throws {
        let server = try ScriptedServer()
        server.route("/negotiated.png", .ok(Self.png, headers: [("Vary", "Accept"), ("Cache-Control", "max-age=3600")]))
        let cli = try CLI()
        let url = server.url("/negotiated.png")
        func source(_ extra: [String]) throws -> String? { try Self.source(cli, url, extra) }
        #expect(try source(["-H", "Accept: image/webp"]) == "network")
        #expect(try source(["-H", "Accept: image/webp"]) == "cache")
        #expect(try source(["-H", "Accept: image/avif"]) == "network")
        #expect(try source([]) == "network")
        #expect(try source([]) == "cache")
        #expect(server.requests("/negotiated.png").compactMap { $0.header("Accept") } == ["image/webp", "image/avif", "*/*"])
        // -H 'Accept:' sends no Accept (curl's removal): not the "*/*" stored by default, nor an empty one.
        #expect(try source(["-H", "Accept:"]) == "network")
        #expect(try source(["-H", "Accept:"]) == "cache")
        #expect(server.requests("/negotiated.png").last.map { $0.headerValues("Accept") } == [])
        #expect(try source(["-H", "Accept;"]) == "cache", "an empty Accept records as no Accept (one value per name)")
        #expect(try source([]) == "network")
    }

    /// `Vary: Accept-Encoding` (nginx's `gzip_vary`, most CDNs) compares what
    /// was sent: every request offers `deflate, gzip, br, zstd` unless `-H`
    /// replaces it. The offer was recorded as "no Accept-Encoding", so a
    /// request sending none (`-H 'Accept-Encoding:'`) reused the copy chosen
    /// for the offer, and one naming the very offer did not.
    @Test func varyAcceptEncodingComparesTheOfferEveryRequestSends() throws {
        let server = try ScriptedServer()
        server.route("/coded.png", .ok(Self.png, headers: [("Vary", "Accept-Encoding"), ("Cache-Control", "max-age=3600")]))
        let cli = try CLI()
        let url = server.url("/coded.png")
        func source(_ extra: [String]) throws -> String? { try Self.source(cli, url, extra) }
        #expect(try source([]) == "network")
        #expect(try source(["-H", "Accept-Encoding: deflate, gzip, br, zstd"]) == "cache", "the offer sent by default")
        #expect(try source(["-H", "Accept-Encoding: ZSTD, br, gzip, deflate"]) == "cache", "in another order and case")
        #expect(try source(["-H", "Accept-Encoding:"]) == "network", "no Accept-Encoding at all is another request")
        #expect(server.requests("/coded.png").last.map { $0.headerValues("Accept-Encoding") } == [])
        #expect(try source(["-H", "Accept-Encoding:"]) == "cache")
        #expect(try source([]) == "network")
        #expect(try source([]) == "cache")
        let offline = try cli.run([url, "--offline", "-H", "Accept-Encoding: gzip"])
        #expect(offline.stdout.contains("stored for others (Vary: accept-encoding)"), "\(offline.stdout)")
    }

    /// An `--offline` miss because of `Vary` says what is true: a copy is
    /// stored, for other request headers (those `Vary` names that differ).
    /// Still `empty`, JSON `reason` still `not-cached` (scripts that handle
    /// offline misses are unchanged), and `vary` names the headers.
    @Test func anOfflineVaryMissSaysACopyIsStoredForOtherHeaders() throws {
        let server = try ScriptedServer()
        server.route("/negotiated.png", .ok(Self.png, headers: [("Vary", "Accept, Accept-Encoding"), ("Cache-Control", "max-age=3600")]))
        let cli = try CLI()
        let url = server.url("/negotiated.png")
        #expect(try cli.run([url, "-H", "Accept: image/webp"]).status == 0)
        let human = try cli.run([url, "--offline", "-H", "Accept: image/avif"])
        #expect(human.status == 1)
        #expect(human.stdout.contains("empty    \(url)  not cached for these request headers: stored for others (Vary: accept)"),
                "\(human.stdout)")
        let json = try Self.json(try cli.run([url, "--offline", "--json"]))
        let empty = try #require(json.first { $0["url"] as? String == url })
        #expect(empty["phase"] as? String == "empty" && empty["reason"] as? String == "not-cached")
        #expect(empty["vary"] as? [String] == ["accept"], "\(empty)")
        let unknown = try cli.run([server.url("/other.png"), "--offline"])
        #expect(unknown.stdout.contains("  not cached\n"), "no entry at all is still plain 'not cached': \(unknown.stdout)")
        #expect(try cli.run([url, "--offline", "-H", "Accept: image/webp"]).status == 0)
    }

    /// An `--offline` miss where `cache list` shows an entry says why that
    /// entry answers nothing: a remembered 404 gone stale (never served
    /// stale, SPEC §5), a body cut short (broken, as `cache list` says). Still
    /// `empty` with JSON `reason` `not-cached`; `staleStatus` and `broken` say why.
    @Test func anOfflineMissSaysWhyAStoredEntryDoesNotAnswer() throws {
        let server = try ScriptedServer()
        let dated = Self.datedGone(on: server)
        server.route("/cut.png", .ok(Self.png, headers: [("Cache-Control", "max-age=3600")]))
        let cli = try CLI()
        let dead = server.url("/dead.png"), cut = server.url("/cut.png")
        #expect(try cli.run([dead, cut]).status == 1)
        #expect(truncate(cli.cacheDir + "/" + (try CLI.md5sum(cut)), 10) == 0)
        HTTPCachingRFCE2ETests.waitForWallClock(Double(dated.value) + 2.1)   // the 404's max-age=2 has run out
        #expect(try cli.run(["cache", "list"]).stdout.contains(dead))
        let human = try cli.run([dead, cut, "--offline"])
        #expect(human.status == 1)
        #expect(human.stdout.contains("empty    \(dead)  not cached: a remembered 404 is stale, and an error is never served stale"),
                "\(human.stdout)")
        #expect(human.stdout.contains("empty    \(cut)  not cached: its entry is broken (a body that is not the one "
                                      + "its metadata describes); cache verify removes it"), "\(human.stdout)")
        let json = try Self.json(try cli.run([dead, cut, "--offline", "--json"]))
        let stale = try #require(json.first { $0["url"] as? String == dead })
        #expect(stale["phase"] as? String == "empty" && stale["reason"] as? String == "not-cached")
        #expect(stale["staleStatus"] as? Int == 404, "\(stale)")
        let broken = try #require(json.first { $0["url"] as? String == cut })
        #expect(broken["phase"] as? String == "empty" && broken["reason"] as? String == "not-cached")
        #expect(broken["broken"] as? String == "a body that is not the one its metadata describes", "\(broken)")
        let path = try cli.run(["cache", "path", cut])
        #expect(path.status == 1 && path.stdout == "-\n", "\(path.stdout)")
        #expect(path.stderr.contains("\(cut): not cached: its entry is broken (a body that is not the one its metadata "
                                     + "describes); cache verify removes it"), "\(path.stderr)")
        let pathJSON = try Self.json(try cli.run(["cache", "path", cut, "--json"]))
        #expect(pathJSON.first?["cached"] as? Bool == false && pathJSON.first?["reason"] as? String == "not-cached")
        #expect(pathJSON.first?["broken"] as? String == "a body that is not the one its metadata describes", "\(pathJSON)")
        #expect(try cli.run(["cache", "verify"]).status == 0)
        let verified = try cli.run([cut, "--offline"])
        #expect(verified.stdout.contains("empty    \(cut)  not cached\n"), "removed: plain 'not cached': \(verified.stdout)")
    }

    /// docs/cache.md: passwords are never stored. A `Vary: Authorization`
    /// (or `Cookie`) response kept the credential sent (`-H 'Authorization:
    /// Basic …'` is a password in base64) in the entry's metadata as sent;
    /// now it keeps a digest of it, and still answers only that credential.
    @Test func aVaryOnCredentialsKeepsNoCredentialAtRest() throws {
        let server = try ScriptedServer()
        server.route("/mine.png", .ok(Self.png, headers: [("Vary", "Authorization, Cookie"), ("Cache-Control", "public, max-age=3600")]))
        let cli = try CLI()
        let url = server.url("/mine.png")
        let basic = "Authorization: Basic " + Data("user:hunter2secret".utf8).base64EncodedString()
        let cookie = "Cookie: session=cookiesecret42"
        func source(_ headers: [String]) throws -> String? {
            let result = try cli.run([url, "--json"] + headers.flatMap { ["-H", $0] })
            return try Self.json(result).first { $0["phase"] as? String == "success" }?["source"] as? String
        }
        #expect(try source([basic, cookie]) == "network")
        #expect(try source([basic, cookie]) == "cache", "the same credentials still match")
        #expect(try source(["Authorization: Basic " + Data("user:other".utf8).base64EncodedString(), cookie]) == "network")
        #expect(try source([basic, cookie]) == "network", "the entry now holds the other user's answer")
        let body = cli.cacheDir + "/" + (try CacheE2E.key(url))
        let script = "import os,sys\ntry: sys.stdout.buffer.write(os.getxattr(sys.argv[1], 'user.asyncfetch.meta'))\nexcept OSError: sys.stdout.buffer.write(open(sys.argv[1] + '.meta', 'rb').read())"
        let record = try runProcess("/usr/bin/python3", ["-c", script, body]).stdout
        #expect(record.contains("v authorization "), "\(record)")
        for secret in [String(basic.dropFirst("Authorization: ".count)), "cookiesecret42"] {
            #expect(!record.contains(secret), "the record keeps \(secret): \(record)")
        }
    }

    @Test func theDemoListFailsExactlyWhereItSaysItWill() throws {
        let (server, cli) = try FixtureSite.start()
        let text = try String(contentsOfFile: Paths.fixtures + "/demo-urls.txt", encoding: .utf8)
        var expectFailure = false
        var urls: [String] = [], failing: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# expected failures") { expectFailure = true }
            guard !line.hasPrefix("#"), !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            let url = line.replacingOccurrences(of: "{BASE}", with: server.baseURL)
            urls.append(url)
            if expectFailure { failing.insert(url) }
        }
        let result = try cli.run(["--json"] + urls)
        #expect(result.status == 1)
        let lines = try Self.json(result)
        for url in urls {
            let terminal = lines.last { $0["url"] as? String == url }
            #expect(terminal?["phase"] as? String == (failing.contains(url) ? "failure" : "success"), "\(url)")
        }
        let truncated = lines.last { ($0["url"] as? String)?.hasSuffix("/images/truncated.png") == true }
        let error = truncated?["error"] as? [String: Any]
        #expect(error?["kind"] as? String == "not-an-image")
        #expect(error?["message"] as? String == "PNG cut inside IDAT chunk 1")
        #expect(Self.summary(lines)["failure"] as? Int == 3)
    }
}

extension HTTPCachingE2ETests {
    /// `/dead.png`: a 404 kept for 2 s by a `Date` the test knows (whole
    /// seconds, so the copy is fresh when stored however late that is within
    /// its first second; `max-age=1` left that to the fraction of the second
    /// the server answered in). The counter holds that `Date`.
    static func datedGone(on server: ScriptedServer) -> LockedCounter {
        let dated = LockedCounter()
        server.route("/dead.png") { _ in
            let now = time(nil)
            dated.set(now)
            return .status(404, headers: [("Cache-Control", "max-age=2"), ("Date", ScriptedServer.httpDate(now))], body: "gone")
        }
        return dated
    }
}
