import Foundation
import Testing
import TestSupport

/// Gaps found by auditing the built binary against SPEC.md and the docs (README.md, docs/)
/// the way a new user would: each test is one sentence of the contract that
/// did not hold.
@Suite struct AuditE2ETests {
    static let png = FixtureSite.png

    static func json(_ result: ProcessResult) throws -> [[String: Any]] {
        try #require(CLI.jsonLines(result.stdout), "stdout: \(result.stdout)")
    }

    /// docs/output.md: `attempts` is the number of requests made, "0 when no
    /// request was needed". A URL refused before any I/O made none.
    @Test func urlsRefusedBeforeAnyRequestCountNoAttempts() async throws {
        let cli = try CLI()
        let urls = ["not a url", "ftp://127.0.0.1/x.png", "http://", "http://exa mple.com/", "1http://x/", "http://[::1"]
        let result = try await cli.run(["--json"] + urls)
        #expect(result.status == 1)
        let failures = try Self.json(result).filter { $0["phase"] as? String == "failure" }
        #expect(failures.count == urls.count)
        for failure in failures {
            #expect(failure["attempts"] as? Int == 0, "\(failure)")
        }
        let verbose = try await cli.run(["-v"] + urls)
        #expect(!verbose.stdout.contains("attempts"), "\(verbose.stdout)")
    }

    /// A stale copy served after the network failed still made the request
    /// that failed: `attempts` counts it (and the retries).
    @Test func staleIfErrorCountsTheFailedAttempts() async throws {
        let server = try ScriptedServer()
        server.route("/flaky.png", [.ok(Self.png, headers: [("Cache-Control", "max-age=0")]), .status(503), .status(503)])
        let cli = try CLI()
        let url = server.url("/flaky.png")
        #expect(try await cli.run([url]).status == 0)
        let stale = try await cli.run([url, "--stale-if-error", "--retries", "1", "--json"])
        #expect(stale.status == 0, "\(stale.stderr)")
        let success = try #require(try Self.json(stale).first { $0["phase"] as? String == "success" })
        #expect(success["source"] as? String == "stale")
        // The first 503 pauses the host, and the one retry waits it out; the
        // second 503 fails, and the stale copy answers (SPEC §5: N retries).
        #expect(success["attempts"] as? Int == 2, "\(success)")
        #expect(server.requestCount("/flaky.png") == 3)
    }

    /// SPEC §7: every `cache` command takes `--cache-dir`, including where a
    /// user naturally puts it: right after `cache`.
    @Test func cacheDirMayFollowTheCacheWord() async throws {
        let cli = try CLI()
        let dir = cli.cache.path + "/elsewhere"
        let stats = try await cli.run(["cache", "--cache-dir", dir, "stats", "--json"])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("\"dir\":\"\(dir)\""), "\(stats.stdout)")
        let equals = try await cli.run(["cache", "--cache-dir=\(dir)", "dir"])
        #expect(equals.status == 0, "\(equals.stderr)")
        #expect(equals.stdout == dir + "\n")
        let path = try await cli.run(["cache", "--cache-dir", dir, "path", "http://127.0.0.1:9/none.png"])
        #expect(path.status == 1, "not cached: \(path.stderr)")
        #expect(path.stderr.contains("not cached"))
    }

    /// An unreadable `--cacert`, or one with no PEM certificate in it, is a
    /// usage error (exit 2, one line naming the file), like an unreadable
    /// `--input`, not a `tls` failure per URL.
    @Test func anUnreadableCACertIsAUsageError() async throws {
        let cli = try CLI()
        let notPEM = try cli.cache.write("not.pem", Array("just some text\n".utf8))
        for file in ["/no/such/ca.pem", cli.cache.path, notPEM] {
            let result = try await cli.run(["--cacert", file, "https://127.0.0.1:9/x.png"])
            #expect(result.status == 2, "\(file): \(result.stdout) \(result.stderr)")
            let lines = result.stderr.split(separator: "\n").map(String.init)
            #expect(lines.first?.hasPrefix("asyncfetch: cannot read --cacert \(file): ") == true, "\(result.stderr)")
            #expect(lines.count == 1, "the machine's problem: no pointer to --help")
            #expect(result.stdout.isEmpty)
        }
        // Not a regular file (a pipe such as `<(…)`): left unread for libcurl, so not a usage error.
        let piped = try await cli.run(["--cacert", "/dev/null", "--offline", "https://127.0.0.1:9/x.png"])
        #expect(piped.status == 1 && piped.stdout.hasPrefix("empty"), "\(piped.stderr)")
    }

    @Test func pruneReportsWhatRemainsInGoodEnglish() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let cli = try CLI()
        #expect(try await cli.run([server.url("/a.png")]).status == 0)
        let pruned = try await cli.run(["cache", "prune", "--max-size", "1G"])
        #expect(pruned.status == 0)
        #expect(pruned.stdout.hasPrefix("removed 0 entries (0 B); 1 entry ("), "\(pruned.stdout)")
        #expect(pruned.stdout.hasSuffix(") remains\n"), "\(pruned.stdout)")
    }

    /// Results that cannot be written (stdout on a full disk) must not end
    /// in exit status 0: a script would take the missing lines for success.
    /// A failed write that is not a closed pipe (a full disk) loses the
    /// lines, not the work: the run goes on, and every URL is stored as it
    /// would have been, whenever the first line failed. Before, a `--json`
    /// run stopped at its `loading` line, and its transfers (here slow to
    /// answer) were never stored.
    @Test func resultsThatCannotBeWrittenAreAFailure() async throws {
        let server = try ScriptedServer()
        var slow = ScriptedResponse.ok(Self.png, headers: [("Cache-Control", "max-age=600")])
        slow.delayBeforeHeaders = 0.5
        server.route("/a.png", slow)
        let cli = try CLI()
        let url = server.url("/a.png")
        let runs: [[String]] = [["--json", url, url + "?2"], [url], ["--json", url], ["cache", "list"],
                                ["cache", "list", "--json"], ["cache", "stats", "--json"], ["cache", "dir"], ["--help"]]
        for arguments in runs {
            let command = "exec " + ([CLI.binary] + arguments).map(CLI.shellQuote).joined(separator: " ") + " > /dev/full"
            let result = try await runProcessOffPool("/bin/sh", ["-c", command], environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("asyncfetch: cannot write standard output: No space left on device"),
                    "\(arguments): \(result.stderr)")
        }
        #expect(server.requests("/a.png").count == 2, "the first run stored both URLs; the others were hits")
        let stored = try await cli.run(["--offline", url, url + "?2"])
        #expect(stored.status == 0, "\(stored.stdout)\(stored.stderr)")
    }

    /// Issue 6: every option's help shows its default, the `cache`
    /// subcommands' too. Checked for each option that takes a value.
    @Test func everyOptionWithAValueShowsItsDefault() async throws {
        let cli = try CLI()
        for command in [["--help"], ["cache", "list", "--help"], ["cache", "prune", "--help"], ["cache", "path", "--help"]] {
            let help = try await cli.run(command).stdout
            guard let options = help.range(of: "OPTIONS:\n") else {
                Issue.record("\(command): no OPTIONS section")
                continue
            }
            var entries: [String] = []
            for line in help[options.upperBound...].split(separator: "\n") {
                if line.hasPrefix("  -") { entries.append(String(line)) } else if !entries.isEmpty { entries[entries.count - 1] += String(line) }
            }
            let withValue = entries.filter { ($0.dropFirst(2).components(separatedBy: "  ").first ?? "").contains("<") }
            #expect(!withValue.isEmpty, "\(command)")
            for entry in withValue {
                #expect(entry.contains("(default"), "\(command): \(entry)")
            }
        }
    }

    /// SPEC §8 / issue 2: `make demo` shows a newcomer every phase. Its
    /// server must take the demo's parallel connections at once: Python's
    /// stock server (backlog 5) made some URLs wait a second.
    @Test func theDemoShowsEveryPhaseWithoutStalls() async throws {
        let script = Paths.packageRoot + "/Tests/tools/demo.sh"
        let result = try await runProcessOffPool("/bin/bash", [script, CLI.binary], timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        let text = result.stdout + result.stderr
        for shown in ["\"phase\":\"loading\"", "\"phase\":\"success\"", "\"phase\":\"failure\"", "empty    http://", "(cache, "] {
            #expect(text.contains(shown), "\(shown) missing from the demo")
        }
        let durations = text.split(separator: "\n").compactMap { line -> Double? in
            guard let range = line.range(of: "\"durationMs\":") else { return nil }
            return Double(line[range.upperBound...].prefix { $0.isNumber || $0 == "." })
        }
        #expect(!durations.isEmpty)
        #expect(durations.allSatisfy { $0 < 800 }, "a URL waited: \(durations.max() ?? 0) ms")
    }

    /// SPEC §3: a duration is seconds or a number with `s`, `m`, `h` or `d`,
    /// and the parser takes any finite one. One too long for libcurl's
    /// milliseconds (`--timeout 99999999999999999999`, 1e20 s) is the longest there is, not a trap
    /// (it ended the run with SIGILL, exit 132, before this was mended).
    @Test func aHugeTimeoutIsTheLongestNotACrash() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let cli = try CLI()
        for option in ["--timeout", "--connect-timeout"] {
            let result = try await cli.run([option, "99999999999999999999", "--refresh", server.url("/a.png")])
            #expect(result.status == 0, "\(option) 1e20 s: exit \(result.status) \(result.stderr)")
            #expect(result.stdout.hasPrefix("success  "), "\(option) 1e20 s: \(result.stdout)")
        }
        #expect(server.requestCount("/a.png") == 2)
    }

    /// `--jobs` takes any count of at least 1 ("must be at least 1" is the
    /// only bound): a huge one is as good as no limit, not a trap (exit 132
    /// from an overflow while sizing the connection caches).
    @Test func aHugeJobCountIsNotACrash() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let cli = try CLI()
        let urls = [server.url("/a.png"), server.url("/a.png?2")]
        let result = try await cli.run(["--jobs", "\(Int.max)", "--jobs-per-host", "\(Int.max)"] + urls)
        #expect(result.status == 0, "exit \(result.status) \(result.stderr)")
        #expect(result.stdout.split(separator: "\n").filter { $0.hasPrefix("success  ") }.count == 2, "\(result.stdout)")
    }

    /// `--shard K/N` takes any N ≥ 1 (SPEC §1): with N past 2^32 each shard
    /// is one value of the key's first 8 hex digits. It trapped (exit 132)
    /// for N > 4294967295.
    @Test func aShardCountPastUInt32IsNotACrash() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let cli = try CLI()
        let url = server.url("/a.png")
        let first = try Self.json(try await cli.run(["--json", url]))
        let path = try #require(first.first { $0["phase"] as? String == "success" }?["path"] as? String)
        let k = try #require(UInt64(String((path as NSString).lastPathComponent.prefix(8)), radix: 16))
        let n: UInt64 = 1 << 33
        for (shard, total) in [("\(k)/\(n)", 1), ("\((k + 1) % n)/\(n)", 0)] {
            let result = try await cli.run(["--json", "--offline", "--shard", shard, url])
            #expect(result.status == 0, "--shard \(shard): exit \(result.status) \(result.stderr)")
            let summary = try Self.json(result).last?["summary"] as? [String: Any]
            #expect(summary?["total"] as? Int == total, "--shard \(shard): \(result.stdout)")
        }
    }

    /// `cache path` and `cache rm` called a URL that a fetch refuses before
    /// any I/O (a space, a port out of range) "not cached" / `absent`,
    /// while the run reports it `invalid-url`: such a URL is in no cache.
    @Test func cacheCommandsCallAURLTheFetchRefusesInvalid() async throws {
        let cli = try CLI()
        let urls = ["http://127.0.0.1/a b.png", "http://127.0.0.1:99999/a.png", "http://127.0.0.1:0/a.png", "ftp://127.0.0.1/a.png"]
        let run = try Self.json(try await cli.run(["--json", "--offline"] + urls)).filter { $0["phase"] as? String == "failure" }
        #expect(run.count == urls.count, "the run refuses each: \(run)")
        let path = try Self.json(try await cli.run(["cache", "path", "--json"] + urls))
        #expect(path.map { $0["reason"] as? String } == Array(repeating: "invalid-url", count: urls.count), "\(path)")
        let removal = try await cli.run(["cache", "rm"] + urls)
        #expect(removal.status == 1)
        #expect(removal.stdout == urls.map { "invalid  \($0)\n" }.joined(), "\(removal.stdout)")
        #expect(removal.stderr.split(separator: "\n").allSatisfy { $0.hasSuffix(": invalid URL") }, "\(removal.stderr)")
        // `cache pull` said "not in the remote cache", after asking the tier for some.
        let tier = try ScriptedServer()
        let pull = try await cli.run(["cache", "pull", "--remote-cache", tier.url("/tier/")] + urls)
        #expect(pull.status == 1)
        #expect(pull.stderr.split(separator: "\n").filter { $0.hasSuffix(": invalid URL") }.count == urls.count, "\(pull.stderr)")
        #expect(tier.totalRequests == 0, "the tier is not asked")
    }

    /// `-v` adds the detail in brackets to every failure line but a failed
    /// background refresh's (`stale-while-revalidate`).
    @Test func verboseDetailsAFailedBackgroundRefresh() async throws {
        let server = try ScriptedServer()
        server.route("/swr.png", [.ok(Self.png, headers: [("Cache-Control", "max-age=0, stale-while-revalidate=600")]), .status(500)])
        let cli = try CLI()
        let url = server.url("/swr.png")
        #expect(try await cli.run([url]).status == 0)
        let result = try await cli.run(["-v", "--retries", "0", url])
        #expect(result.status == 0, "\(result.stderr)")
        let refresh = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(refresh.hasPrefix("refresh  \(url)  background revalidation failed: HTTP 500 Internal Server Error; the stored copy stays  [http, attempts 1, "),
                "\(result.stdout)")
    }

    /// `--cache-dir=~/c` (no shell expands a `~` after `=`) or a quoted
    /// `ASYNCFETCH_CACHE_DIR='~/c'` made a folder named `~` in the working
    /// directory, silently; `rm -rf ~` would then be the way to remove it.
    /// Now a usage error that says what to write, and nothing is made.
    @Test func aCacheDirectoryWithAnUnexpandedTildeIsRefused() async throws {
        let cli = try CLI()
        let work = cli.cache.path + "/work"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: false)
        let home = cli.cache.path + "/home"
        let runs: [(arguments: String, environment: String, says: String)] = [
            ("--cache-dir=~/c cache dir", "", "--cache-dir ~/c: "),
            ("cache dir", "ASYNCFETCH_CACHE_DIR='~/c' ", "ASYNCFETCH_CACHE_DIR=~/c: "),
            ("--cache-dir '~' --offline http://127.0.0.1:1/a.png", "", "--cache-dir ~: "),
        ]
        for run in runs {
            let command = "cd \(CLI.shellQuote(work)) && HOME=\(CLI.shellQuote(home)) \(run.environment)exec \(CLI.shellQuote(CLI.binary)) \(run.arguments)"
            let result = try await runProcessOffPool("/bin/sh", ["-c", command], environment: [:])
            #expect(result.status == 2, "\(run.arguments): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.hasPrefix("asyncfetch: " + run.says + "a leading '~' is expanded only by a shell"), "\(result.stderr)")
            #expect(result.stderr.contains("write \(home)" + (run.says.contains("~/c") ? "/c" : "")), "\(result.stderr)")
            #expect((try? FileManager.default.contentsOfDirectory(atPath: work)) == [], "nothing made in the working directory")
        }
    }
}
