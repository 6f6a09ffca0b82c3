import Foundation
import Testing
import TestSupport

/// Gaps found in session 15 by trying the built binary as a new user would,
/// option by option and in combinations the earlier audits did not reach
/// (the `cache` commands' lists, habits of wget and aria2c, `--shard`):
/// each test is one sentence of the docs that did not hold.
@Suite struct CommandLineAuditE2ETests {
    /// `cache pull -i a.txt -i b.txt` read only b.txt, exiting 0: its `-i`
    /// took one file, and swift-argument-parser keeps the last of a repeated
    /// option silently. Like a fetch run's, the lists are read in order.
    @Test func cachePullReadsEveryList() throws {
        let store = try WebDAVStore()
        let server = try FixtureSite.server()
        let urls = [server.url("/images/red-64x48.png"), server.url("/images/anim-33x17.gif")]
        let origin = try CLI(), home = try CLI()
        #expect(try origin.run(["--remote-cache", store.url] + urls).status == 0)
        let a = try home.cache.write("a.txt", Array("\(urls[0])\n".utf8))
        let b = try home.cache.write("b.txt", Array("\(urls[1])\n".utf8))
        let pulled = try home.run(["cache", "pull", "--remote-cache", store.url, "-i", a, "-i", b])
        #expect(pulled.status == 0, "\(pulled.stderr)")
        #expect(Set(pulled.stdout.split(separator: "\n").map(String.init)) == Set(urls.map { "pulled   " + $0 }),
                "\(pulled.stdout)\(pulled.stderr)")
        #expect(try home.run(["--offline"] + urls).status == 0, "both entries are now local")
    }

    /// The list written for `-P DIR` (`URL<TAB>name` lines, README) names
    /// the same URLs everywhere: without `-P` each such line was an
    /// `invalid-url` failure, and `cache path`, `rm` and `pull` took the
    /// whole line for a URL ("not cached", the entry left in place).
    @Test func aNamedListWorksWithoutAFolderAndInTheCacheCommands() throws {
        let (server, cli) = try FixtureSite.start()
        let url = server.url("/images/red-64x48.png"), other = server.url("/images/anim-33x17.gif")
        let list = try cli.cache.write("named.txt", Array("\(url)\tmine.png\n\(other)\n".utf8))
        let placed = try cli.run(["-i", list, "-P", cli.cache.path + "/photos"])
        #expect(placed.status == 0, "\(placed.stdout)\(placed.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.cache.path + "/photos/mine.png"))

        let offline = try cli.run(["--offline", "-i", list])
        #expect(offline.status == 0, "\(offline.stdout)\(offline.stderr)")
        #expect(offline.stdout.hasPrefix("success  \(url)  "), "\(offline.stdout)")
        let path = try cli.run(["cache", "path", "-i", list])
        #expect(path.status == 0, "\(path.stdout)\(path.stderr)")
        #expect(path.stdout.split(separator: "\n").count == 2 && !path.stdout.contains("-\n"), "\(path.stdout)")
        let json = try #require(CLI.jsonLines(try cli.run(["cache", "path", "--json", "-i", list]).stdout))
        #expect(json.first?["url"] as? String == url && json.first?["cached"] as? Bool == true, "\(json)")

        let removed = try cli.run(["cache", "rm", "-i", list])
        #expect(removed.status == 0, "\(removed.stdout)\(removed.stderr)")
        #expect(try cli.run(["cache", "path", url]).status == 1, "the entry is gone")

        let store = try WebDAVStore()
        #expect(try cli.run(["--remote-cache", store.url, url]).status == 0)
        let home = try CLI()
        let pulled = try home.run(["cache", "pull", "--remote-cache", store.url, "-i", list])
        #expect(pulled.stdout.contains("pulled   \(url)\n"), "\(pulled.stdout)\(pulled.stderr)")
        // A tab is never part of a URL: given as an argument, such a string is still invalid.
        let argument = try cli.run(["--json", "--offline", "\(url)\tmine.png"])
        #expect(argument.stdout.contains("\"kind\":\"invalid-url\""), "\(argument.stdout)")
    }

    /// wget's and aria2c's habits that got a wrong answer (`-nd` was read as
    /// curl's `-n`, "credentials are read only from the URL"), a bare
    /// "Unknown option", or a wrong guess (`--dir` → "Did you mean
    /// '--link'?", `--out` → '--input'): each gets its one line (exit 2), and
    /// docs/habits.md lists it.
    @Test func moreHabitsOfWgetAndAria2GetTheirAnswer() throws {
        let cli = try CLI()
        let habits = try String(contentsOfFile: Paths.packageRoot + "/docs/habits.md", encoding: .utf8)
        let rows: [(String, String)] = [
            ("-nd", "always on: files go straight into -P DIR"), ("-nH", "always on: files go straight into -P DIR"),
            ("--no-directories", "always on"), ("-np", "not supported, because asyncfetch does not crawl"),
            ("--recursive", "not supported, because asyncfetch does not crawl"), ("--mirror", "not supported"),
            ("--max-redirs", "not supported, because redirects are always followed, at most 10"),
            ("--max-redirect", "not supported, because redirects are always followed"),
            ("--dir", "use -P DIR"), ("--out", "use -o FILE for one URL"), ("--max-tries", "use --retries N"),
            ("--retry-wait", "not supported, because the backoff is automatic"),
            ("--check-certificate", "always on: TLS certificates are verified"), ("--all-proxy", "not supported as an option"),
            ("--read-timeout", "use --timeout DURATION"), ("--dns-timeout", "use --connect-timeout DURATION"),
            ("--retry-connrefused", "always on: connect errors"), ("--retry-all-errors", "always on"),
        ]
        for (flag, answer) in rows {
            let result = try cli.run([flag, "http://127.0.0.1:9/x.png"])
            #expect(result.status == 2, "\(flag)")
            #expect(result.stderr.hasPrefix("asyncfetch: \(flag): \(answer)"), "\(flag): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
            #expect(habits.contains("`\(flag)`"), "docs/habits.md names \(flag)")
        }
        // aria2c's --check-certificate=false, as typed.
        let aria = try cli.run(["--check-certificate=false", "http://127.0.0.1:9/x.png"])
        #expect(aria.status == 2 && aria.stderr.contains("--insecure turns the checks off"), "\(aria.stderr)")
        // wget's -r is not curl's range: the answer says both.
        #expect(try cli.run(["-r", "http://127.0.0.1:9/x.png"]).stderr.contains("does not crawl"))
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

    /// `asyncfetch --json cache list` (options first, as with git) fetched
    /// the "URLs" cache and list: two invalid-url failures, exit 1. `cache`
    /// and `help` are never URLs: options before them go behind the command,
    /// whose parser takes them (or names the one it does not have).
    @Test func optionsBeforeTheCommandWordGoToTheCommand() throws {
        let (server, cli) = try FixtureSite.start()
        let url = server.url("/images/red-64x48.png")
        #expect(try cli.run([url]).status == 0)
        let list = try cli.run(["--json", "cache", "list"])
        #expect(list.status == 0, "\(list.stdout)\(list.stderr)")
        let entries = try #require(CLI.jsonLines(list.stdout), "\(list.stdout)")
        #expect(entries.count == 1 && entries.first?["url"] as? String == url, "\(entries)")
        let stats = try cli.run(["--json", "--cache-dir", cli.cacheDir, "cache", "stats"])
        #expect(stats.status == 0 && stats.stdout.hasPrefix("{\"entries\":1,"), "\(stats.stdout)\(stats.stderr)")
        let path = try cli.run(["--json", "cache", "path", url])
        #expect(path.status == 0 && path.stdout.contains("\"cached\":true"), "\(path.stdout)\(path.stderr)")
        let help = try cli.run(["-v", "help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: asyncfetch"), "\(help.stdout)\(help.stderr)")
        let topic = try cli.run(["-v", "help", "bogus"])
        #expect(topic.status == 2 && topic.stderr.contains("no help on 'bogus'"), "\(topic.stdout)\(topic.stderr)")
        let unknown = try cli.run(["-q", "cache", "stats"])
        #expect(unknown.status == 2 && unknown.stderr.contains("'-q'") && !unknown.stdout.contains("invalid-url"),
                "\(unknown.stdout)\(unknown.stderr)")
        // An option's value may be the word: that is still a fetch run.
        let named = try cli.run(["--offline", "--user-agent", "cache", url])
        #expect(named.status == 0 && named.stdout.hasPrefix("success  \(url)"), "\(named.stdout)\(named.stderr)")
        // wget's `-O FILE` with a file named like the word: still told that -O takes no file name
        // (not "Unknown option '-O'" from `cache`, nor "no help on URL").
        // So is `wget -qO FILE URL`, which fetched FILE as a URL and put the body in the current folder.
        for (flag, word) in [("-O", "cache"), ("-O", "help"), ("-qO", "out.png"), ("-vO", "cache")] {
            let wget = try cli.run([flag, word, url])
            #expect(wget.status == 2 && wget.stderr.hasPrefix("asyncfetch: \(flag) \(word): -O takes no file name")
                    && wget.stderr.contains("wget's -O FILE is -o FILE"), "\(flag) \(word): \(wget.stdout)\(wget.stderr)")
        }
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

    /// `cache rm -i urls.txt` with a URL listed twice (lists often are; the
    /// fetch run reports each distinct URL once) removed the entry, then
    /// said "absent" and "not cached" for the repeat and exited 1. A URL
    /// whose entry this command removed is `removed` each time it is named.
    @Test func removingAURLListedTwiceSucceeds() throws {
        let (server, cli) = try FixtureSite.start()
        let url = server.url("/images/red-64x48.png")
        #expect(try cli.run([url]).status == 0)
        let list = try cli.cache.write("twice.txt", Array("\(url)\n\(url)#again\n".utf8))
        let removed = try cli.run(["cache", "rm", url, "-i", list])
        #expect(removed.status == 0, "\(removed.stdout)\(removed.stderr)")
        #expect(removed.stdout == ["removed  \(url)", "removed  \(url)", "removed  \(url)#again"].joined(separator: "\n") + "\n",
                "\(removed.stdout)")
        #expect(removed.stderr.isEmpty, "\(removed.stderr)")
        let again = try cli.run(["cache", "rm", "--json", url])
        #expect(again.status == 1 && again.stdout.contains("\"reason\":\"not-cached\""), "a later command finds nothing: \(again.stdout)")
    }
}
