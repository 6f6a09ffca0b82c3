import Foundation
import Testing
import TestSupport

/// Option values a user may give: at their limits (a huge timeout, job
/// count or shard count) they work, and a value of the wrong form (a size,
/// a shard, an empty path, an unreadable --cacert, an unexpanded `~`, a
/// tier without a host) is a usage error (exit 2) before any request.
@Suite struct OptionValuesE2ETests {
    /// SPEC §3: a duration is seconds or a number with `s`, `m`, `h` or `d`,
    /// and the parser takes any finite one. One too long for libcurl's
    /// milliseconds (`--timeout 99999999999999999999`, 1e20 s) is the longest there is, not a trap
    /// (it ended the run with SIGILL, exit 132, before this was mended).
    @Test func aHugeTimeoutIsTheLongestNotACrash() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(FixtureSite.png))
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
        server.route("/a.png", .ok(FixtureSite.png))
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
        server.route("/a.png", .ok(FixtureSite.png))
        let cli = try CLI()
        let url = server.url("/a.png")
        let first = try HTTPCachingE2ETests.json(try await cli.run(["--json", url]))
        let path = try #require(first.first { $0["phase"] as? String == "success" }?["path"] as? String)
        let k = try #require(UInt64(String((path as NSString).lastPathComponent.prefix(8)), radix: 16))
        let n: UInt64 = 1 << 33
        for (shard, total) in [("\(k)/\(n)", 1), ("\((k + 1) % n)/\(n)", 0)] {
            let result = try await cli.run(["--json", "--offline", "--shard", shard, url])
            #expect(result.status == 0, "--shard \(shard): exit \(result.status) \(result.stderr)")
            let summary = try HTTPCachingE2ETests.json(result).last?["summary"] as? [String: Any]
            #expect(summary?["total"] as? Int == total, "--shard \(shard): \(result.stdout)")
        }
    }

    /// A `--shard` value of the wrong form lists the accepted forms, as the
    /// other values do (docs/output.md, exit status 2); `-1/2` was "Missing
    /// value for '--shard <K/N>'", as if none had been given.
    @Test func aBadShardListsTheAcceptedForms() throws {
        let cli = try CLI()
        for (arguments, value) in [(["--shard", "-1/2"], "-1/2"), (["--shard", "1/1"], "1/1"), (["--shard=2/0"], "2/0"),
                                   (["cache", "pull", "--remote-cache", "http://127.0.0.1:9/", "--shard", "-1/4"], "-1/4")] {
            let result = try cli.run(arguments + ["http://127.0.0.1:9/x.png"])
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains("'\(value)' is invalid for '--shard <K/N>': give K/N") && result.stderr.contains("0 <= K < N"),
                    "\(arguments): \(result.stderr)")
        }
    }

    /// `--shard 1/2 URL -o FILE` with the URL in shard 0 wrote no file and
    /// exited 0 (the URL was filtered out, so nothing had failed): a script
    /// then went on without its file. `-o` is for one URL; with a shard of
    /// more than one it is a usage error.
    @Test func outputWithAShardIsAUsageError() throws {
        let (server, cli) = try FixtureSite.start()
        let url = server.url("/images/red-64x48.png")
        let target = cli.cache.path + "/one.png"
        for shard in ["0/2", "1/2"] {
            let result = try cli.run(["--shard", shard, url, "-o", target])
            #expect(result.status == 2 && result.stderr.contains("-o/--output and --shard exclude each other"),
                    "\(shard): \(result.stdout)\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try cli.run(["--shard", "0/1", url, "-o", target]).status == 0, "one shard holds every URL")
        #expect(FileManager.default.fileExists(atPath: target))
    }

    /// `-o "$OUT"` with OUT unset downloaded the body, then failed with
    /// "cannot write : No such file or directory" (exit 1), and `-P ""` said
    /// "cannot create --output-dir : …". An empty value is a usage error
    /// before any request, as `--cache-dir ""` is (docs/cache.md).
    @Test func anEmptyOutputIsAUsageErrorBeforeAnyRequest() throws {
        let (server, cli) = try FixtureSite.start()
        let url = server.url("/images/red-64x48.png")
        for arguments in [["-o", ""], ["-P", ""], ["--output-dir", ""]] {
            let result = try cli.run(arguments + [url])
            #expect(result.status == 2, "\(arguments): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("is empty: give a"), "\(arguments): \(result.stderr)")
        }
        #expect(server.totalRequests == 0)
    }

    /// `--max-size 5iB` was 5 bytes (the `iB` of `KiB` dropped alone), while
    /// `10B` is refused: a size is bytes or a number with K, M or G.
    @Test func aSizeWithAStrayUnitIsRefused() throws {
        let cli = try CLI()
        for arguments in [["--max-size", "5iB", "http://127.0.0.1:9/x.png"], ["cache", "prune", "--max-size", "5iB"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 2 && result.stderr.contains("'5iB' is invalid for '--max-size <size>': give bytes"),
                    "\(arguments): \(result.stderr)")
        }
        #expect(try cli.run(["cache", "prune", "--max-size", "5KiB"]).status == 0)
    }

    /// `--max-size 1.7` was 1 byte (the fraction cut off): a size that does
    /// not come to whole bytes is refused; `1.5K` (1536 bytes) still works.
    @Test func aSizeOfFractionalBytesIsRefused() throws {
        let (server, cli) = try FixtureSite.start()
        let url = server.url("/images/red-64x48.png")   // 153 bytes
        for arguments in [["--max-size", "1.7", url], ["--max-size", "0.1K", url], ["cache", "prune", "--max-size", "1.7"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stdout)")
            #expect(result.stderr.contains("is invalid for '--max-size <size>': give bytes")
                    && result.stderr.contains("that comes to a whole number of bytes"), "\(arguments): \(result.stderr)")
        }
        #expect(server.requests("/images/red-64x48.png").isEmpty, "refused before any request")
        let fits = try cli.run(["--max-size", "1.5K", url])
        #expect(fits.status == 0, "\(fits.stdout)\(fits.stderr)")
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

    /// `--remote-cache http://` was taken: each key was appended to it, so
    /// the tier asked the host named by the key (one "could not resolve
    /// host: 8f9d…" warning per run). A tier without a host, or with a query
    /// or fragment the keys would follow, is a usage error, as `s3://` is.
    @Test func aRemoteCacheWithoutAHostIsAUsageError() throws {
        let cli = try CLI()
        for (location, reason) in [("http://", "no host named"), ("https:///cache/", "no host named"),
                                   ("http://127.0.0.1:9/cache?x=1", "a query or fragment")] {
            for arguments in [["--remote-cache", location, "http://127.0.0.1:9/x.png"],
                              ["cache", "pull", "--remote-cache", location, "http://127.0.0.1:9/x.png"]] {
                let result = try cli.run(arguments)
                #expect(result.status == 2 && result.stderr.contains(reason), "\(arguments): \(result.stdout)\(result.stderr)")
            }
        }
    }
}
