import Foundation
import Glibc
import Testing
import TestSupport

/// The `cache` commands' arguments (SPEC §7): where `--cache-dir` and
/// options may go, URL lists given with `-i`, URLs a fetch refuses, and
/// what `prune` reports.
@Suite struct CacheCommandsE2ETests {
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

    /// `cache path` and `cache rm` called a URL that a fetch refuses before
    /// any I/O (a space, a port out of range) "not cached" / `absent`,
    /// while the run reports it `invalid-url`: such a URL is in no cache.
    @Test func cacheCommandsCallAURLTheFetchRefusesInvalid() async throws {
        let cli = try CLI()
        let urls = ["http://127.0.0.1/a b.png", "http://127.0.0.1:99999/a.png", "http://127.0.0.1:0/a.png", "ftp://127.0.0.1/a.png"]
        let run = try HTTPCachingE2ETests.json(try await cli.run(["--json", "--offline"] + urls)).filter { $0["phase"] as? String == "failure" }
        #expect(run.count == urls.count, "the run refuses each: \(run)")
        let path = try HTTPCachingE2ETests.json(try await cli.run(["cache", "path", "--json"] + urls))
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

    @Test func pruneReportsWhatRemainsInGoodEnglish() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(FixtureSite.png))
        let cli = try CLI()
        #expect(try await cli.run([server.url("/a.png")]).status == 0)
        let pruned = try await cli.run(["cache", "prune", "--max-size", "1G"])
        #expect(pruned.status == 0)
        #expect(pruned.stdout.hasPrefix("removed 0 entries (0 B); 1 entry ("), "\(pruned.stdout)")
        #expect(pruned.stdout.hasSuffix(") remains\n"), "\(pruned.stdout)")
    }

    /// `cache list`, `stats` and `path` only read the cache, yet on a cache
    /// directory that did not exist they created it (mode 0700, parents
    /// too): a mistyped `--cache-dir` left a folder behind. They now report
    /// what an empty cache holds and leave the file system as it was; `dir`
    /// still creates it (documented), and so does a fetch run.
    @Test func commandsThatOnlyReadDoNotCreateTheCacheDirectory() async throws {
        let cli = try CLI()
        let dir = cli.cache.path + "/typo/cache"
        let list = try await cli.run(["cache", "list", "--cache-dir", dir])
        #expect(list.status == 0 && list.stdout.isEmpty && list.stderr.isEmpty, "\(list.stdout)\(list.stderr)")
        let json = try await cli.run(["cache", "list", "--json", "--cache-dir", dir])
        #expect(json.status == 0 && json.stdout.isEmpty, "\(json.stdout)\(json.stderr)")
        let stats = try await cli.run(["cache", "stats", "--json", "--cache-dir", dir])
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout == "{\"entries\":0,\"bytes\":0,\"dir\":\"\(dir)\",\"broken\":0,\"temporaryFiles\":0,\"partialFiles\":0}\n",
                "\(stats.stdout)")
        let human = try await cli.run(["cache", "stats", "--cache-dir", dir + "/"])
        #expect(human.status == 0 && human.stdout.hasPrefix("directory  \(dir)\nentries    0\n"), "\(human.stdout)")
        let path = try await cli.run(["cache", "path", "--json", "--cache-dir", dir, "http://127.0.0.1:9/a.png", "ftp://x/y.png"])
        #expect(path.status == 1)
        let lines = CLI.jsonLines(path.stdout) ?? []
        #expect(lines.map { $0["reason"] as? String } == ["not-cached", "invalid-url"], "\(path.stdout)")
        #expect(!FileManager.default.fileExists(atPath: cli.cache.path + "/typo"), "nothing made")
        // A directory that is there is still checked: one other users may write to is refused.
        let shared = cli.cache.path + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        #expect(chmod(shared, 0o777) == 0)
        let refused = try await cli.run(["cache", "list", "--cache-dir", shared])
        #expect(refused.status == 2 && refused.stderr.contains("is writable by other users"), "\(refused.stderr)")
        let empty = try await cli.run(["cache", "list", "--cache-dir", ""])
        #expect(empty.status == 2 && empty.stderr.contains("--cache-dir is empty"), "\(empty.stderr)")
        // `dir` makes it, as documented.
        let made = try await cli.run(["cache", "dir", "--cache-dir", dir])
        #expect(made.status == 0 && made.stdout == dir + "\n" && FileManager.default.fileExists(atPath: dir))
    }

    /// `rm`, `clear`, `verify` and `prune` of a cache directory that does not
    /// exist made it (empty, mode 0700) to report that it held nothing: a
    /// typo in `--cache-dir` left a folder behind. Like `path`, `list` and
    /// `stats`, they find nothing there and make nothing; one that could not
    /// be made is still a usage error.
    @Test func commandsThatRemoveDoNotCreateAMissingCacheDirectory() async throws {
        let cli = try CLI()
        let dir = cli.cache.path + "/typo/cache"
        let rm = try await cli.run(["cache", "rm", "--cache-dir", dir, "http://127.0.0.1:9/a.png", "ftp://x/y.png"])
        #expect(rm.status == 1 && rm.stdout == "absent   http://127.0.0.1:9/a.png\ninvalid  ftp://x/y.png\n", "\(rm.stdout)\(rm.stderr)")
        let clear = try await cli.run(["cache", "clear", "--json", "--cache-dir", dir])
        let cleared = CLI.jsonLines(clear.stdout)?.first?["summary"] as? [String: Any]
        #expect(clear.status == 0 && cleared?["removed"] as? Int == 0 && cleared?["dir"] as? String == dir,
                "\(clear.stdout)\(clear.stderr)")
        let verify = try await cli.run(["cache", "verify", "--json", "--cache-dir", dir])
        let verified = CLI.jsonLines(verify.stdout)?.last?["summary"] as? [String: Any]
        #expect(verify.status == 0 && verified?["checked"] as? Int == 0, "\(verify.stdout)\(verify.stderr)")
        let prune = try await cli.run(["cache", "prune", "--max-size", "0", "--cache-dir", dir])
        #expect(prune.status == 0 && prune.stdout.hasPrefix("removed 0 entries"), "\(prune.stdout)\(prune.stderr)")
        for human in [["clear"], ["verify"]] {
            let result = try await cli.run(["cache"] + human + ["--cache-dir", dir])
            #expect(result.status == 0 && !result.stdout.isEmpty, "\(human): \(result.stdout)\(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: cli.cache.path + "/typo"), "nothing made")
        // One that cannot be made is said, as before.
        for command in [["rm", "http://127.0.0.1:9/a.png"], ["clear"], ["verify"], ["prune", "--max-age", "1d"]] {
            let result = try await cli.run(["cache"] + command + ["--cache-dir", "/proc/asyncfetch-cache"])
            #expect(result.status == 2 && result.stderr.contains("/proc/asyncfetch-cache"), "\(command): \(result.stderr)")
        }
    }

    /// `--offline` only looks (which of these are cached?), yet it made a
    /// missing cache directory, empty and 0700, as a download does: a typo in
    /// `--cache-dir` or `ASYNCFETCH_CACHE_DIR` left a folder behind, where
    /// `cache path` of the same URLs makes nothing. It now makes nothing and
    /// finds every URL `empty` (not cached); a malformed URL is still its
    /// `failure`, a directory that could not be made still exit 2, and a run
    /// that may download still makes the directory.
    @Test func anOfflineRunDoesNotCreateAMissingCacheDirectory() async throws {
        let cli = try CLI()
        let typo = cli.cache.path + "/typo"
        let url = "http://127.0.0.1:9/a.png"
        let offline = try await cli.run(["--offline", "--json", "--cache-dir", typo + "/cache", url, "notaurl", url + "#again"])
        let lines = try #require(CLI.jsonLines(offline.stdout), "\(offline.stdout)")
        #expect(offline.status == 1, "\(offline.stdout)\(offline.stderr)")
        #expect(lines.contains { $0["url"] as? String == url && $0["phase"] as? String == "empty" && $0["reason"] as? String == "not-cached" },
                "\(offline.stdout)")
        let summary = lines.last?["summary"] as? [String: Any]
        #expect(summary?["total"] as? Int == 2 && summary?["empty"] as? Int == 1 && summary?["failure"] as? Int == 1, "\(offline.stdout)")
        let fromEnvironment = try await cli.run(["--offline", url, "-o", cli.cache.path + "/a.png"],
                                                environment: ["ASYNCFETCH_CACHE_DIR": typo + "/env"])
        #expect(fromEnvironment.status == 1 && fromEnvironment.stdout.hasPrefix("empty "), "\(fromEnvironment.stdout)\(fromEnvironment.stderr)")
        #expect(!FileManager.default.fileExists(atPath: typo), "nothing made")
        #expect(!FileManager.default.fileExists(atPath: cli.cache.path + "/a.png"), "no -o file for an empty URL")
        let unmakeable = try await cli.run(["--offline", "--cache-dir", "/proc/asyncfetch-cache", url])
        #expect(unmakeable.status == 2 && unmakeable.stderr.contains("/proc/asyncfetch-cache"), "\(unmakeable.stderr)")
        let download = try await cli.run(["--retries", "0", "--cache-dir", typo + "/cache", url])
        #expect(download.status == 1 && FileManager.default.fileExists(atPath: typo + "/cache"), "\(download.stdout)\(download.stderr)")
    }

    /// `--cache-dir DIR/typo/../cache` could not be followed (`typo` is not
    /// there): `cache list` and `stats` found no cache, while a run made
    /// `DIR/typo` on the way to `DIR/cache` and printed every path through
    /// it. The `..` goes with the missing folder, for every command.
    @Test func aParentStepAfterAMissingFolderGoesWithIt() async throws {
        let cli = try CLI()
        let given = cli.cache.path + "/typo/../cache"
        let run = try await cli.run(["--retries", "0", "--json", "--cache-dir", given, "http://127.0.0.1:9/a.png"])
        #expect(run.status == 1, "\(run.stdout)\(run.stderr)")
        let dir = try await cli.run(["cache", "dir", "--cache-dir", given])
        #expect(dir.status == 0 && dir.stdout == cli.cache.path + "/cache\n", "\(dir.stdout)\(dir.stderr)")
        let stats = try await cli.run(["cache", "stats", "--json", "--cache-dir", given])
        #expect(stats.status == 0 && stats.stdout.contains("\"dir\":\"\(cli.cache.path)/cache\""), "\(stats.stdout)\(stats.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.cache.path + "/cache"))
        #expect(!FileManager.default.fileExists(atPath: cli.cache.path + "/typo"), "nothing made on the way")
    }

    /// With standard output and error on one pipe (`2>&1 | …`), a cache
    /// command's message on stderr came before the stdout lines printed
    /// ahead of it (stdout was flushed only at the exit): `cache path`'s "not
    /// cached" before the path of the URL named first, `cache pull`'s
    /// summary before its `pulled` lines. Both now come in the order written.
    @Test func messagesOnStderrComeAfterTheLinesBeforeThemInOnePipe() throws {
        let (server, cli) = try FixtureSite.start()
        let url = server.url("/images/red-64x48.png"), missing = server.url("/images/none.png")
        let store = try WebDAVStore()
        #expect(try cli.run(["--remote-cache", store.url, url]).status == 0)
        func merged(_ arguments: [String], cacheDir: String) throws -> [String] {
            let result = try runProcess("/bin/sh", ["-c", "exec \"$0\" \"$@\" 2>&1", CLI.binary] + arguments,
                                        environment: ["ASYNCFETCH_CACHE_DIR": cacheDir])
            return result.stdout.split(separator: "\n").map(String.init)
        }
        let path = try merged(["cache", "path", url, missing], cacheDir: cli.cacheDir)
        let key = try CLI.md5sum(url)
        #expect(path.count == 3 && path.first?.hasSuffix("/" + key) == true
                && path[1].contains("not cached") && path[2] == "-", "\(path)")
        let home = try CLI()
        let pull = try merged(["cache", "pull", "--remote-cache", store.url, url, missing], cacheDir: home.cacheDir)
        // The two URLs are pulled at once, in either order; the summary is last.
        #expect(pull.count == 3 && pull.contains("pulled   " + url) && pull.last?.hasPrefix("1 pulled, ") == true, "\(pull)")
    }

    /// `cache pull` whose `pulled` lines cannot be written (stdout a full disk) fails, as every
    /// command's output does (`StandardStreamsE2ETests`). Before, flushing stdout ahead of the
    /// summary on stderr met the failure and glibc dropped the lines, so the exit's own flush
    /// found nothing left: exit 0, nothing written, no word of it.
    @Test func aPullWhoseLinesCannotBeWrittenFails() async throws {
        let (server, cli) = try FixtureSite.start()
        let url = server.url("/images/red-64x48.png")
        let store = try WebDAVStore()
        #expect(try await cli.run(["--remote-cache", store.url, url]).status == 0)
        let home = try CLI()
        let command = "exec " + [CLI.binary, "cache", "pull", "--remote-cache", store.url, url].map(CLI.shellQuote)
            .joined(separator: " ") + " > /dev/full"
        let result = try await runProcessOffPool("/bin/sh", ["-c", command], environment: ["ASYNCFETCH_CACHE_DIR": home.cacheDir])
        #expect(result.status == 1, "\(result.stderr)")
        #expect(result.stderr.contains("1 pulled, ") && result.stderr.hasSuffix(
            "asyncfetch: cannot write standard output: No space left on device\n"), "\(result.stderr)")
    }
}
