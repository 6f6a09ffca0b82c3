import Foundation
import Glibc
import Testing
import TestSupport

/// `asyncfetch cache …` end to end: what a user sees and what stays on disk.
@Suite struct CacheE2ETests {
    static let images = ["/images/red-64x48.png", "/images/photo-120x80.jpg", "/images/anim-33x17.gif"]

    /// A cache holding the three fixture images, and the server they came from.
    func filledCache() throws -> (CLI, ScriptedServer, [String]) {
        let (server, cli) = try FixtureSite.start()
        let urls = Self.images.map { server.url($0) }
        let result = try cli.run(urls)
        #expect(result.status == 0, "\(result.stderr)")
        return (cli, server, urls)
    }

    @Test func listShowsEveryEntryAsJSONLines() throws {
        let (cli, _, urls) = try filledCache()
        let started = Date().timeIntervalSince1970
        let result = try cli.run(["cache", "list", "--json"])
        #expect(result.status == 0)
        let lines = try #require(CLI.jsonLines(result.stdout))
        #expect(lines.count == 3)
        #expect(Set(lines.compactMap { $0["url"] as? String }) == Set(urls))
        let types = ["png": "image/png", "jpg": "image/jpeg", "gif": "image/gif"]
        for line in lines {
            let url = try #require(line["url"] as? String)
            let fixture = Paths.fixtures + (Self.images.first { url.hasSuffix($0) } ?? "")
            let size = try FileManager.default.attributesOfItem(atPath: fixture)[.size] as? Int
            #expect(line["path"] as? String == cli.cacheDir + "/" + (try CacheE2E.key(url)))
            #expect(line["bytes"] as? Int == size)
            #expect(line["fresh"] as? Bool == true)
            #expect(line["contentType"] as? String == types[String(url.split(separator: ".").last ?? "")])
            let stored = try #require(line["storedAt"] as? String)
            let date = try #require(ISO8601DateFormatter().date(from: stored))
            #expect(abs(date.timeIntervalSince1970 - started) < 120)
        }
        // Human form: one readable line per entry; --default-ttl decides freshness as for fetching.
        let human = try cli.run(["cache", "list", "--default-ttl", "0"])
        let rows = human.stdout.split(separator: "\n")
        #expect(rows.count == 3)
        for (row, url) in zip(rows, urls.sorted()) {
            #expect(row.hasPrefix("stale  ") && row.hasSuffix("  " + url))
        }
    }

    @Test func statsCountsEntriesAndTheCachesOwnBytes() throws {
        let (cli, _, _) = try filledCache()
        try Data(count: 123_456).write(to: URL(fileURLWithPath: cli.cacheDir + "/not-ours.bin"))
        let result = try cli.run(["cache", "stats", "--json"])
        #expect(result.status == 0)
        let object = try #require(CLI.jsonLines(result.stdout)?.first)
        #expect(object["entries"] as? Int == 3)
        #expect(object["dir"] as? String == cli.cacheDir)
        let own = CacheE2E.files(in: cli.cacheDir).filter { $0 != "not-ours.bin" && $0 != ".asyncfetch-store" }
        #expect(own.count == 3, "one file per entry: \(own)")
        let total = try own.reduce(0) { $0 + ((try FileManager.default.attributesOfItem(atPath: cli.cacheDir + "/" + $1)[.size] as? Int) ?? 0) }
        #expect(object["bytes"] as? Int == total)
        let human = try cli.run(["cache", "stats"])
        #expect(human.stdout.contains("entries    3"))
        #expect(human.stdout.contains(cli.cacheDir))
    }

    /// SPEC §7: the cache commands touch only the cache's own files. A file
    /// named like an entry but carrying no metadata at all is not one (the
    /// cache never leaves such a file): verify names it and says how to
    /// remove it, and no command removes or counts it.
    @Test func aKeyNamedFileWithoutMetadataIsLeftAloneAndNamed() throws {
        let (cli, _, urls) = try filledCache()
        let mine = cli.cacheDir + "/" + (try CacheE2E.key("http://127.0.0.1:1/not-fetched.png"))
        try Data("my notes".utf8).write(to: URL(fileURLWithPath: mine))
        let verify = try cli.run(["cache", "verify"])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("kept     \(mine)  no metadata: not written by asyncfetch, so left alone (rm it if it is not yours either)"),
                "\(verify.stdout)")
        #expect(verify.stdout.contains("verified 3 entries: 3 intact, 0 corrupt removed, 1 file without metadata kept"), "\(verify.stdout)")
        let stats = CLI.jsonLines(try cli.run(["cache", "stats", "--json"]).stdout)?.first
        #expect(stats?["entries"] as? Int == 3 && stats?["broken"] as? Int == 0, "\(String(describing: stats))")
        #expect(try cli.run(["cache", "prune", "--max-size", "0"]).status == 0)
        #expect(try cli.run(["cache", "clear"]).status == 0)
        #expect(try cli.run(["cache", "rm", "http://127.0.0.1:1/not-fetched.png"]).stdout.hasPrefix("absent"))
        #expect(try String(contentsOfFile: mine, encoding: .utf8) == "my notes")
        #expect(try cli.run(["--offline"] + urls).status == 1, "the entries themselves are gone")
    }

    /// `prune --max-size 0` empties the cache (docs/http.md): a remembered
    /// error status, whose file holds no body (0 bytes), goes too. It stayed,
    /// as "1 entry (0 B) remains", since 0 bytes are within a 0-byte limit.
    @Test func pruneToZeroBytesRemovesRememberedErrorsToo() throws {
        let (cli, server, urls) = try filledCache()
        server.route("/gone.png") { _ in ScriptedResponse(status: 404, headers: [("Cache-Control", "max-age=3600")], body: Array("no".utf8)) }
        let gone = server.url("/gone.png")
        #expect(try cli.run([gone]).status == 1)
        #expect(try cli.run(["cache", "list"]).stdout.contains("HTTP 404"), "the 404 is remembered")
        let pruned = try cli.run(["cache", "prune", "--max-size", "0"])
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.stdout.hasSuffix("; 0 entries (0 B) remain\n"), "\(pruned.stdout)")
        #expect(try cli.run(["cache", "list"]).stdout.isEmpty)
        #expect(try cli.run(["--offline", gone] + urls).stdout.split(separator: "\n").allSatisfy { $0.hasPrefix("empty") })
    }

    /// An entry fetched with a password is listed with it hidden (passwords
    /// are never stored), but keyed by the whole URL: `cache rm` (or `path`)
    /// of the URL as `cache list` shows it (or without the `:***`) finds
    /// nothing, and says why.
    @Test func aURLListedWithoutItsPasswordIsRemovedByNamingThePassword() throws {
        let (server, cli) = try FixtureSite.start()
        let withPassword = server.url("/images/red-64x48.png").replacingOccurrences(of: "://", with: "://ann:s3cret@")
        let listed = withPassword.replacingOccurrences(of: ":s3cret@", with: ":***@")
        #expect(try cli.run([withPassword]).status == 0)
        #expect(try cli.run(["cache", "list", "--json"]).stdout.contains("\"url\":\"\(listed)\""))
        for named in [listed, withPassword.replacingOccurrences(of: ":s3cret@", with: "@")] {
            let asListed = try cli.run(["cache", "rm", named])
            #expect(asListed.status == 1 && asListed.stdout == "absent   \(named)\n", "\(asListed.stdout)")
            #expect(asListed.stderr.contains("\(named): not cached (an entry fetched with a password is kept under the URL "
                                             + "with its password, which cache list shows as ***: name the URL with it)"),
                    "\(asListed.stderr)")
            #expect(!asListed.stderr.contains("s3cret"))
        }
        let other = try cli.run(["cache", "path", server.url("/images/none.png")])
        #expect(other.stderr.hasSuffix(": not cached\n"), "a URL without a user gets no hint: \(other.stderr)")
        let named = try cli.run(["cache", "rm", withPassword])
        #expect(named.status == 0 && named.stdout == "removed  \(withPassword.replacingOccurrences(of: "s3cret", with: "***"))\n",
                "\(named.stdout)")
        #expect(try cli.run(["cache", "list"]).stdout.isEmpty)
    }

    @Test func verifyRemovesTruncatedAndCorruptEntriesAndTheNextRunRefetches() throws {
        let (cli, server, urls) = try filledCache()
        let truncated = cli.cacheDir + "/" + (try CacheE2E.key(urls[0]))
        let corrupt = cli.cacheDir + "/" + (try CacheE2E.key(urls[1]))
        #expect(truncate(truncated, 10) == 0)
        // Same size, same mtime, one byte different: only the digest can tell.
        var before = stat()
        #expect(stat(corrupt, &before) == 0)
        var body = try Data(contentsOf: URL(fileURLWithPath: corrupt))
        body[body.count / 2] ^= 0xFF
        try body.write(to: URL(fileURLWithPath: corrupt))
        #expect(utimensat(AT_FDCWD, corrupt, [before.st_atim, before.st_mtim], 0) == 0)

        // The truncated body is a miss at once (length check); the flipped byte needs verify.
        let offline = try cli.run(["--offline", "--json"] + urls)
        let phases = (CLI.jsonLines(offline.stdout) ?? []).compactMap { $0["phase"] as? String }
        #expect(phases == ["empty", "success", "success"])

        let verify = try cli.run(["cache", "verify"])
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(verify.stdout.contains("removed  \(urls[0])"))
        #expect(verify.stdout.contains("removed  \(urls[1])"))
        #expect(verify.stdout.contains("verified 3 entries: 1 intact, 2 corrupt removed"))
        #expect(!FileManager.default.fileExists(atPath: truncated) && !FileManager.default.fileExists(atPath: corrupt))
        #expect(try cli.run(["cache", "verify"]).stdout.contains("1 intact, 0 corrupt removed"))

        let before2 = server.totalRequests
        let again = try cli.run(["--json"] + urls)
        let sources = (CLI.jsonLines(again.stdout) ?? []).filter { $0["phase"] as? String == "success" }.compactMap { $0["source"] as? String }
        #expect(sources.sorted() == ["cache", "network", "network"])
        #expect(server.totalRequests == before2 + 2)
        let origin = try Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + Self.images[1]))
        #expect(try Data(contentsOf: URL(fileURLWithPath: corrupt)) == origin)
    }

    /// What a run with --any stored is an intact entry like any other (SPEC
    /// §5): later runs without --any get it from the cache, --offline reports
    /// it as success, and a stale one is revalidated (a 304 keeps it).
    @Test func anEntryStoredWithAnyIsServedWithoutIt() throws {
        let server = try ScriptedServer()
        server.route("/page", handler: { request in
            if request.headers.contains(where: { $0.name.lowercased() == "if-none-match" }) {
                return ScriptedResponse.status(304, headers: [("ETag", "\"v1\"")])
            }
            return .ok(Array("<!doctype html><p>hello</p>".utf8), contentType: "text/html",
                       headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v1\"")])
        })
        let cli = try CLI()
        let url = server.url("/page")
        #expect(try cli.run(["--any", url]).status == 0)
        for (arguments, source) in [([url], "cache"), (["--offline", url], "cache"), (["--refresh", url], "revalidated")] {
            let result = try cli.run(["--json"] + arguments)
            #expect(result.status == 0, "\(arguments): \(result.stdout)")
            let line = CLI.jsonLines(result.stdout)?.last { $0["url"] as? String == url }
            #expect(line?["phase"] as? String == "success" && line?["source"] as? String == source, "\(arguments): \(result.stdout)")
        }
        #expect(server.requestCount("/page") == 2)
        #expect(server.requests("/page").last?.headers.contains { $0.name.lowercased() == "if-none-match" } == true)
    }

    @Test func aBodyTruncatedByTheServerIsNeverStored() throws {
        let server = try ScriptedServer()
        var response = ScriptedResponse.ok([UInt8](repeating: 0x89, count: 200_000), contentType: "image/png")
        response.closeAfterBodyBytes = 50_000
        server.route("/cut.png", response)
        let cli = try CLI()
        let url = server.url("/cut.png")
        let result = try cli.run(["--json", "--any", "--retries", "0", url])
        #expect(result.status == 1)
        #expect(CLI.jsonLines(result.stdout)?.contains { $0["phase"] as? String == "failure" } == true)
        #expect(try cli.run(["cache", "path", url]).status == 1)
        #expect(CacheE2E.files(in: cli.cacheDir).isEmpty)
        #expect(CacheE2E.files(in: cli.cacheDir + "/.tmp").isEmpty)
    }

    @Test func pruneEvictsTheLeastRecentlyUsedAndAHitCountsAsAUse() throws {
        let (cli, server, urls) = try filledCache()
        let keys = try urls.map { try CacheE2E.key($0) }
        // Last used 3, 2 and 1 hours ago.
        for (key, hours) in zip(keys, [3.0, 2.0, 1.0]) {
            let t = Date().timeIntervalSince1970 - hours * 3600
            // The last use: the body's atime (or the metadata's, if later); the body's mtime, which the metadata records, stays.
            let spec = timespec(tv_sec: Int(t), tv_nsec: 0), omit = timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)
            #expect(utimensat(AT_FDCWD, cli.cacheDir + "/" + key, [spec, omit], 0) == 0)
        }
        // Using the oldest one now moves it to the back of the queue.
        let requests = server.totalRequests
        #expect(try cli.run([urls[0]]).stdout.contains("(cache,"))
        #expect(server.totalRequests == requests)
        func size(_ key: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: cli.cacheDir + "/" + key)[.size] as? Int) ?? 0
        }
        let keep = try size(keys[0]) + size(keys[2])
        let prune = try cli.run(["cache", "prune", "--max-size", String(keep)])
        #expect(prune.status == 0, "\(prune.stderr)")
        #expect(prune.stdout.hasPrefix("removed 1 entry"))
        #expect(try cli.run(["cache", "path", urls[1]]).status == 1, "the least recently used entry goes first")
        #expect(try cli.run(["cache", "path", urls[0], urls[2]]).status == 0)
        // Unused for more than 90 minutes: none now (0 used just now, 2 an hour ago); 30 minutes: entry 2 goes.
        #expect(try cli.run(["cache", "prune", "--max-age", "90m"]).stdout.hasPrefix("removed 0 entries"))
        #expect(try cli.run(["cache", "prune", "--max-age", "30m"]).stdout.hasPrefix("removed 1 entry"))
        #expect(try cli.run(["cache", "path", urls[0]]).status == 0)
        #expect(try cli.run(["cache", "path", urls[2]]).status == 1)
    }

    /// SPEC §4: the cache's own reads never move an entry's last use, so
    /// they leave `prune`'s order alone. `cache verify --decode` hands each
    /// body to libvips, which opens it by name, and `--offline -o` or `-P`
    /// copied the body with a plain read: on a `relatime` mount each entry
    /// then looked used just now.
    @Test func verifyListAndOfflineLeaveTheLastUseAlone() throws {
        let (cli, _, urls) = try filledCache()
        let keys = try urls.map { try CacheE2E.key($0) }
        // Last used three days ago (older than a day: relatime would move it on any read).
        let old = timespec(tv_sec: Int(Date().timeIntervalSince1970) - 3 * 86400, tv_nsec: 0)
        let omit = timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)
        for key in keys { #expect(utimensat(AT_FDCWD, cli.cacheDir + "/" + key, [old, omit], 0) == 0) }
        // Handing entries on with --offline only looks too (docs/cache.md): -o and --output-dir copy the body.
        let copies = [["--offline", urls[0], "-o", cli.cache.file("out.png")], ["--offline", "-P", cli.cache.file("out")] + urls]
        for command in [["cache", "verify", "--decode"], ["cache", "verify"], ["cache", "list", "--json"], ["--offline"] + urls] + copies {
            let result = try cli.run(command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            for key in keys {
                var info = stat()
                #expect(stat(cli.cacheDir + "/" + key, &info) == 0)
                #expect(info.st_atim.tv_sec == old.tv_sec, "\(command) moved the last use of \(key)")
            }
        }
    }

    @Test func rmAndClearRemoveOnlyTheCachesOwnFiles() throws {
        let (cli, _, urls) = try filledCache()
        let foreign = ["notes.txt", String(repeating: "e", count: 31) + "g", (try CacheE2E.key(urls[0])) + ".bak", ".tmp/mine.part"]
        try FileManager.default.createDirectory(atPath: cli.cacheDir + "/.tmp", withIntermediateDirectories: true)
        for name in foreign {
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: cli.cacheDir + "/" + name))
        }
        let rm = try cli.run(["cache", "rm", urls[0], server404(urls[0])])
        #expect(rm.status == 1, "one URL was not cached")
        #expect(rm.stdout == "removed  \(urls[0])\nabsent   \(server404(urls[0]))\n", "one line per URL, in order")
        #expect(rm.stderr.contains("not cached"))
        #expect(try cli.run(["cache", "path", urls[0]]).status == 1)
        let clear = try cli.run(["cache", "clear"])
        #expect(clear.status == 0)
        #expect(clear.stdout.hasPrefix("removed 2 entries"))
        #expect(try cli.run(["cache", "list"]).stdout.isEmpty)
        for name in foreign {
            #expect(FileManager.default.fileExists(atPath: cli.cacheDir + "/" + name), "\(name) is not the cache's and must survive")
        }
        #expect(CacheE2E.files(in: cli.cacheDir).sorted() == (foreign.filter { !$0.hasPrefix(".tmp/") } + [".asyncfetch-store"]).sorted())
    }

    func server404(_ url: String) -> String { url.replacingOccurrences(of: "/images/", with: "/elsewhere/") }

    @Test func usageErrorsExit2() throws {
        let cli = try CLI()
        for arguments in [["cache"], ["cache", "prune"], ["cache", "rm"], ["cache", "path"], ["cache", "prune", "--max-size", "lots"],
                          ["cache", "prune", "--max-age", "soon"], ["cache", "frobnicate"], ["cache", "list", "--jsn"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 2, "\(arguments) must be a usage error: \(result.stderr)")
            #expect(!result.stderr.isEmpty)
        }
    }

    /// `asyncfetch cache` alone is a usage error (exit 2) that names the subcommands, not help with exit 0.
    @Test func cacheWithoutASubcommandSaysWhichThereAre() throws {
        let result = try CLI().run(["cache"])
        #expect(result.status == 2 && result.stdout.isEmpty, "\(result.stdout)")
        #expect(result.stderr.contains("needs a subcommand: dir, path, list, stats, verify, prune, rm, clear or pull"), "\(result.stderr)")
        #expect(try CLI().run(["cache", "--help"]).status == 0)
    }

    /// `cache list` shows the broken entries `cache stats` counts (after the
    /// intact ones, with the reason), for people and in JSON.
    @Test func listShowsTheBrokenEntriesStatsCounts() throws {
        let (cli, _, urls) = try filledCache()
        let truncated = cli.cacheDir + "/" + (try CacheE2E.key(urls[0]))
        #expect(truncate(truncated, 10) == 0)
        let stats = try CLI.jsonLines(cli.run(["cache", "stats", "--json"]).stdout)?.first
        #expect(stats?["entries"] as? Int == 2 && stats?["broken"] as? Int == 1, "\(String(describing: stats))")
        let list = try cli.run(["cache", "list"])
        let lines = list.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(list.stdout)")
        let broken = try #require(lines.last)
        #expect(broken.hasPrefix("broken -") && broken.contains(urls[0])
                && broken.hasSuffix("(a body that is not the one its metadata describes)"), "\(broken)")
        let json = try #require(CLI.jsonLines(try cli.run(["cache", "list", "--json"]).stdout))
        #expect(json.count == 3)
        #expect(json.last?["url"] as? String == urls[0] && json.last?["path"] as? String == truncated)
        #expect(json.last?["broken"] as? String == "a body that is not the one its metadata describes")
        #expect(json.last?["fresh"] as? Bool == false, "a script reading every line's fresh never trusts a broken entry")
        #expect(json.dropLast().allSatisfy { $0["broken"] == nil && $0["fresh"] as? Bool == true })
    }

    /// An entry this user may not read (mode 000) cannot be judged: `verify`
    /// names it and keeps it (exit 1), `prune` leaves it, `list` shows it.
    @Test(.enabled(if: CacheE2E.canDropPrivileges, "needs root and setpriv to run a child as nobody"))
    func verifyKeepsAndNamesAnEntryItCannotRead() throws {
        let (cli, _, urls) = try filledCache()
        #expect(chmod(cli.cache.path, 0o755) == 0)
        #expect(try runProcess("/bin/chown", ["-R", "65534:65534", cli.cacheDir]).status == 0)
        let locked = cli.cacheDir + "/" + (try CacheE2E.key(urls[1]))
        #expect(chmod(locked, 0) == 0)
        func asNobody(_ arguments: [String]) throws -> ProcessResult {
            try runProcess("/usr/bin/setpriv", CacheE2E.nobody + [CLI.binary] + arguments,
                           environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
        }
        let verify = try asNobody(["cache", "verify"])
        #expect(verify.status == 1, "\(verify.stdout)\(verify.stderr)")
        #expect(verify.stdout.contains("unreadable  \(locked)  Permission denied: not checked, so kept"), "\(verify.stdout)")
        #expect(verify.stdout.contains("verified 3 entries: 2 intact, 0 corrupt removed, 1 unreadable (kept)"), "\(verify.stdout)")
        #expect(FileManager.default.fileExists(atPath: locked), "what cannot be judged is not removed")
        let prune = try asNobody(["cache", "prune", "--max-age", "0"])
        #expect(prune.status == 1 && FileManager.default.fileExists(atPath: locked), "\(prune.stdout)\(prune.stderr)")
        #expect(prune.stdout.contains("1 of them unreadable by this user and kept (cache verify names them)"), "\(prune.stdout)")
        let list = try asNobody(["cache", "list"])
        #expect(list.stdout.contains("\(locked)  (unreadable (Permission denied))"), "\(list.stdout)")
    }

    /// A cache directory that cannot be used is a usage error naming it, for every command.
    @Test func anUnusableDirectoryExits2NamingItForEveryCommand() throws {
        let cli = try CLI()
        let file = cli.cache.path + "/a-file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let url = "http://127.0.0.1:1/x.png"
        let commands: [[String]] = [[url], ["--offline", url], ["cache", "dir"], ["cache", "path", url], ["cache", "list"],
                                    ["cache", "list", "--json"], ["cache", "stats"], ["cache", "stats", "--json"], ["cache", "verify"],
                                    ["cache", "prune", "--max-size", "1M"], ["cache", "rm", url], ["cache", "clear"]]
        for bad in [file, file + "/below", "/proc/asyncfetch-cannot-exist"] {
            for command in commands {
                let viaOption = try cli.run(command + ["--cache-dir", bad])
                #expect(viaOption.status == 2, "\(command) --cache-dir \(bad): \(viaOption.stderr)")
                #expect(viaOption.stderr.contains(bad), "\(command): \(viaOption.stderr)")
                let viaEnvironment = try cli.run(command, environment: ["ASYNCFETCH_CACHE_DIR": bad])
                #expect(viaEnvironment.status == 2 && viaEnvironment.stderr.contains(bad))
            }
        }
    }

    /// SPEC §5: "URLs are printed with any password removed", the same way
    /// everywhere: a result line and `cache list` both show `user:***@`
    /// for a URL fetched with a password, and `user@` for one without.
    @Test func cacheListShowsAPasswordAsTheResultsDo() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(FixtureSite.png))
        server.route("/b.png", .ok(FixtureSite.png))
        let cli = try CLI()
        let authority = String(server.baseURL.dropFirst("http://".count))
        let withPassword = "http://ann:s3cret@\(authority)/a.png"
        let userOnly = "http://bob@\(authority)/b.png"
        let fetched = try await cli.run([withPassword, userOnly])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout.contains("http://ann:***@\(authority)/a.png"))
        #expect(fetched.stdout.contains("http://bob@\(authority)/b.png"))
        let list = try await cli.run(["cache", "list"])
        #expect(list.stdout.contains("  http://ann:***@\(authority)/a.png\n"), "\(list.stdout)")
        #expect(list.stdout.contains("  http://bob@\(authority)/b.png\n"), "\(list.stdout)")
        let json = try await cli.run(["cache", "list", "--json"])
        let urls = try HTTPCachingE2ETests.json(json).compactMap { $0["url"] as? String }
        #expect(Set(urls) == ["http://ann:***@\(authority)/a.png", "http://bob@\(authority)/b.png"], "\(urls)")
        #expect(!list.stdout.contains("s3cret") && !json.stdout.contains("s3cret"))
        // Named as listed, the entry is not found, and the hint says why.
        let named = try await cli.run(["cache", "path", "http://ann:***@\(authority)/a.png"])
        #expect(named.status == 1 && named.stderr.contains("name the URL with it"), "\(named.stderr)")
    }
}
