import Foundation
import Glibc
import Testing
import TestSupport

/// Where the cache lives (SPEC §4), with a temporary HOME: the binary is run
/// with variables set, unset, empty or relative, from a chosen directory.
@Suite struct CacheDirectoryE2ETests {
    static let variables = ["ASYNCFETCH_CACHE_DIR", "XDG_CACHE_HOME", "HOME"]

    /// Runs `asyncfetch arguments` with only `set` of the cache variables
    /// (the others unset), in `directory`.
    func run(_ arguments: [String], set: [String: String], in directory: String? = nil, as user: [String]? = nil) throws -> ProcessResult {
        var env = ["/usr/bin/env"]
        for name in Self.variables where set[name] == nil { env += ["-u", name] }
        if let directory { env += ["-C", directory] }
        env += set.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let command = env + [CLI.binary] + arguments
        if let user { return try runProcess("/usr/bin/setpriv", user + command) }
        return try runProcess(command[0], Array(command.dropFirst()))
    }

    @Test func homeGivesDotCacheCreatedWithMode0700() throws {
        let temp = try TempDirectory()
        let home = temp.path + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        let result = try run(["cache", "dir"], set: ["HOME": home])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == home + "/.cache/asyncfetch\n")
        #expect(CacheE2E.mode(home + "/.cache") == 0o700)
        #expect(CacheE2E.mode(home + "/.cache/asyncfetch") == 0o700)
    }

    @Test func anExistingDirectoryKeepsItsMode() throws {
        let temp = try TempDirectory()
        let home = temp.path + "/home"
        try FileManager.default.createDirectory(atPath: home + "/.cache/asyncfetch", withIntermediateDirectories: true)
        #expect(chmod(home + "/.cache", 0o755) == 0 && chmod(home + "/.cache/asyncfetch", 0o750) == 0)
        let server = try FixtureSite.server()
        let fetched = try run([server.url("/images/red-64x48.png")], set: ["HOME": home])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout.contains(home + "/.cache/asyncfetch/"))
        #expect(CacheE2E.mode(home + "/.cache") == 0o755)
        #expect(CacheE2E.mode(home + "/.cache/asyncfetch") == 0o750)
    }

    @Test func anAbsoluteXDGCacheHomeWinsOverHome() throws {
        let temp = try TempDirectory()
        let result = try run(["cache", "dir"], set: ["HOME": temp.path + "/home", "XDG_CACHE_HOME": temp.path + "/xdg"])
        #expect(result.stdout == temp.path + "/xdg/asyncfetch\n")
        #expect(CacheE2E.mode(temp.path + "/xdg") == 0o700)
        #expect(!FileManager.default.fileExists(atPath: temp.path + "/home"), "HOME must not be touched")
        // Empty means unset.
        let empty = try run(["cache", "dir"], set: ["HOME": temp.path + "/home", "XDG_CACHE_HOME": ""])
        #expect(empty.stdout == temp.path + "/home/.cache/asyncfetch\n")
    }

    @Test func aRelativeXDGCacheHomeIsIgnored() throws {
        let temp = try TempDirectory()
        let result = try run(["cache", "dir"], set: ["HOME": temp.path + "/home", "XDG_CACHE_HOME": "relative/xdg"], in: temp.path)
        #expect(result.stdout == temp.path + "/home/.cache/asyncfetch\n")
        #expect(!FileManager.default.fileExists(atPath: temp.path + "/relative"))
    }

    /// `$HOME/.cache` is the XDG default, so a relative HOME is ignored as a
    /// relative XDG_CACHE_HOME is, for the home of the user's passwd entry
    /// (nobody's: /nonexistent), instead of a cache under the working directory.
    @Test func aRelativeHomeIsIgnored() throws {
        let result = try run(["cache", "dir"], set: ["HOME": "relative/home"], in: "/",
                             as: ["--reuid=65534", "--regid=65534", "--clear-groups"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("/nonexistent/.cache/asyncfetch") && !result.stderr.contains("relative"), "\(result.stderr)")
    }

    @Test func theVariableAndTheOptionWinAndRelativePathsStartAtTheWorkingDirectory() throws {
        let temp = try TempDirectory()
        let all = ["HOME": temp.path + "/home", "XDG_CACHE_HOME": temp.path + "/xdg", "ASYNCFETCH_CACHE_DIR": "rel/cache"]
        let variable = try run(["cache", "dir"], set: all, in: temp.path)
        #expect(variable.stdout == temp.path + "/rel/cache\n")
        #expect(CacheE2E.mode(temp.path + "/rel") == 0o700)
        let option = try run(["cache", "dir", "--cache-dir", "opt"], set: all, in: temp.path)
        #expect(option.stdout == temp.path + "/opt\n")
        let absolute = try run(["cache", "stats", "--json", "--cache-dir", temp.path + "/abs"], set: all)
        #expect(CLI.jsonLines(absolute.stdout)?.first?["dir"] as? String == temp.path + "/abs")
        #expect(!FileManager.default.fileExists(atPath: temp.path + "/xdg") && !FileManager.default.fileExists(atPath: temp.path + "/home"))
    }

    /// `--cache-dir DIR/` (as shell completion writes it) or
    /// `ASYNCFETCH_CACHE_DIR=DIR/`: every path printed, in lines and JSON,
    /// reads `DIR/<md5>`, never `DIR//<md5>`.
    @Test func aTrailingSlashPrintsCleanPaths() throws {
        let temp = try TempDirectory()
        let server = try FixtureSite.server()
        let url = server.url("/images/red-64x48.png")
        let dir = temp.path + "/c", key = try CLI.md5sum(url)
        let entry = dir + "/" + key
        let given = ["--cache-dir", dir + "/"]
        let fetched = try run(given + [url], set: [:])
        #expect(fetched.status == 0 && fetched.stdout.contains("  \(entry)  (network"), "\(fetched.stdout)\(fetched.stderr)")
        #expect(try run(["cache", "dir"] + given, set: [:]).stdout == dir + "\n")
        #expect(try run(["cache", "dir"], set: ["ASYNCFETCH_CACHE_DIR": dir + "//"]).stdout == dir + "\n")
        #expect(try run(["cache", "path", url] + given, set: [:]).stdout == entry + "\n")
        let list = try run(["cache", "list", "--json"] + given, set: [:])
        #expect(CLI.jsonLines(list.stdout)?.first?["path"] as? String == entry, "\(list.stdout)")
        let stats = try run(["cache", "stats", "--json"] + given, set: [:])
        #expect(CLI.jsonLines(stats.stdout)?.first?["dir"] as? String == dir, "\(stats.stdout)")
        let saved = try run(given + [url, "-P", temp.path + "/out/"], set: [:])
        #expect(saved.stdout.contains("  \(entry)  (cache") && saved.stdout.contains("-> \(temp.path)/out/red-64x48.png"), "\(saved.stdout)")
        let linked = try run(given + [url, "-P", temp.path + "/linked/", "--link", "--json"], set: [:])
        let success = CLI.jsonLines(linked.stdout)?.first { $0["phase"] as? String == "success" }
        #expect(success?["path"] as? String == entry && success?["output"] as? String == temp.path + "/linked/red-64x48.png", "\(linked.stdout)")
        for result in [fetched, saved, linked, list] { #expect(!result.stdout.contains(dir + "//"), "\(result.stdout)") }
    }

    /// HOME unset: the passwd entry's home. As `nobody` that is /nonexistent,
    /// which cannot be created: a usage error naming the whole path.
    @Test(.enabled(if: CacheE2E.canDropPrivileges, "needs root and setpriv to run a child as nobody"))
    func withoutHomeThePasswdEntryDecides() throws {
        let passwd = try runProcess("/usr/bin/getent", ["passwd", "nobody"])
        let home = try #require(passwd.stdout.split(separator: ":", omittingEmptySubsequences: false).dropFirst(5).first)
        let expected = String(home) + "/.cache/asyncfetch"
        for set in [[String: String](), ["HOME": ""]] {
            let result = try run(["cache", "dir"], set: set, in: "/", as: CacheE2E.nobody)
            if FileManager.default.fileExists(atPath: String(home)) {
                #expect(result.stdout == expected + "\n")
            } else {
                #expect(result.status == 2)
                #expect(result.stderr.contains(expected), "\(result.stderr)")
            }
        }
    }

    /// The same for this user, without creating anything in the real home:
    /// checked only where the directory already exists.
    @Test func withoutHomeTheCurrentUsersPasswdEntryIsUsed() throws {
        guard let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir else { return }
        let expected = String(cString: dir) + "/.cache/asyncfetch"
        guard FileManager.default.fileExists(atPath: expected) else { return }
        let result = try run(["cache", "dir"], set: [:])
        #expect(result.stdout == expected + "\n")
    }
}

/// Issue 23, item 6: a cache directory another user could plant files in is
/// refused by every command, with how to fix it; group-writable is allowed.
@Suite struct CacheDirectoryTrustE2ETests {
    /// Every command that opens the cache, with `url` as the URL it needs.
    static func commands(_ url: String, list: String) -> [[String]] {
        [[url], ["--offline", url], ["cache", "dir"], ["cache", "path", url], ["cache", "list"], ["cache", "stats"],
         ["cache", "verify"], ["cache", "prune", "--max-size", "1G"], ["cache", "rm", url], ["cache", "clear"],
         ["cache", "pull", "--remote-cache", "http://127.0.0.1:9/cache/", "-i", list]]
    }

    /// A cache with one entry (so each command has something to do), made by this user.
    static func filledCache(_ server: ScriptedServer) throws -> (CLI, String) {
        let cli = try CLI()
        let url = server.url("/images/red-64x48.png")
        let fetched = try cli.run([url])
        #expect(fetched.status == 0, "\(fetched.stderr)")
        return (cli, url)
    }

    static func list(_ cli: CLI, _ url: String) throws -> String {
        let path = cli.cache.path + "/urls.txt"
        try (url + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aWorldWritableCacheDirectoryIsRefusedByEveryCommand() throws {
        let server = try ScriptedServer()
        server.serveDirectory(Paths.fixtures)
        let (cli, url) = try Self.filledCache(server)
        #expect(chmod(cli.cacheDir, 0o777) == 0)
        let before = CacheE2E.files(in: cli.cacheDir)
        for command in Self.commands(url, list: try Self.list(cli, url)) {
            let result = try cli.run(command)
            #expect(result.status == 2, "\(command): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("cache directory \(cli.cacheDir) is writable by other users (mode 0777)"), "\(command): \(result.stderr)")
            #expect(result.stderr.contains("chmod 700 \(cli.cacheDir)"), "\(command): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(command): \(result.stdout)")
        }
        #expect(CacheE2E.files(in: cli.cacheDir) == before, "a refused cache is left as it was")
        // Fixed as the message says: accepted again.
        #expect(chmod(cli.cacheDir, 0o700) == 0)
        #expect(try cli.run(["cache", "list"]).status == 0)
    }

    /// The sticky bit (as on /tmp) does not make a directory safe, and it is
    /// shared by design: the message never says `chmod 700 /tmp` (which root
    /// may run, and which breaks the machine), but names a folder of this
    /// user's own inside it, and that folder works.
    @Test func aSharedStickyDirectoryGetsAFolderOfItsOwnNotAChmod() throws {
        let cli = try CLI()
        let shared = cli.cache.path + "/shared"
        #expect(mkdir(shared, 0o700) == 0 && chmod(shared, 0o1777) == 0)
        let refused = try cli.run(["cache", "dir", "--cache-dir", shared])
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("cache directory \(shared) is writable by other users (mode 1777)"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("chmod"), "\(refused.stderr)")
        let user = String(cString: getpwuid(geteuid()).pointee.pw_name)
        let own = shared + "/asyncfetch-" + user
        #expect(refused.stderr.contains("use a folder of your own in it, made with mode 0700: --cache-dir \(own)"), "\(refused.stderr)")
        let fixed = try cli.run(["cache", "dir", "--cache-dir", own])
        #expect(fixed.status == 0 && fixed.stdout == own + "\n", "\(fixed.stdout)\(fixed.stderr)")
        #expect(CacheE2E.mode(own) == 0o700)
        #expect(CacheE2E.mode(shared) == 0o1777, "the shared directory is left as it was")
    }

    @Test func aGroupWritableCacheDirectoryIsAccepted() throws {
        let server = try ScriptedServer()
        server.serveDirectory(Paths.fixtures)
        let (cli, url) = try Self.filledCache(server)
        #expect(chmod(cli.cacheDir, 0o770) == 0)
        for command in Self.commands(url, list: try Self.list(cli, url)).dropLast() {   // pull: its remote is not there
            let result = try cli.run(command)
            #expect(result.status == 0, "\(command): \(result.stdout)\(result.stderr)")
        }
        #expect(CacheE2E.mode(cli.cacheDir) == 0o770)
    }

    @Test func aTmpOrPartialFolderOthersCanWriteIsRefused() throws {
        let server = try ScriptedServer()
        server.serveDirectory(Paths.fixtures)
        let (cli, url) = try Self.filledCache(server)
        // Sticky or not: a folder of the cache's own is this user's to chmod, never a cache to
        // make a folder in (`--cache-dir DIR/.tmp/asyncfetch-USER` is for a shared /tmp).
        for (folder, mode, shown) in [(".tmp", mode_t(0o777), "0777"), (".partial", 0o777, "0777"), (".tmp", 0o1777, "1777"),
                                       (".partial", 0o1777, "1777")] {
            let path = cli.cacheDir + "/" + folder
            if !FileManager.default.fileExists(atPath: path) { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
            #expect(chmod(path, mode) == 0)
            for command in [[url], ["cache", "list"], ["cache", "clear"]] {
                let result = try cli.run(command)
                #expect(result.status == 2, "\(folder) \(command): \(result.stderr)")
                #expect(result.stderr.contains("cache folder \(path) is writable by other users (mode \(shown))"), "\(result.stderr)")
                #expect(result.stderr.contains("run chmod 700 \(path)"), "\(result.stderr)")
                #expect(!result.stderr.contains("--cache-dir"), "\(result.stderr)")
            }
            #expect(chmod(path, 0o700) == 0)
            #expect(try cli.run(["cache", "list"]).status == 0)
        }
    }

    @Test(.enabled(if: CacheE2E.canDropPrivileges, "needs root to hand a directory to nobody"))
    func aCacheDirectoryOwnedByAnotherUserIsRefused() throws {
        let server = try ScriptedServer()
        server.serveDirectory(Paths.fixtures)
        let (cli, url) = try Self.filledCache(server)
        #expect(chown(cli.cacheDir, 65534, 65534) == 0)
        for command in Self.commands(url, list: try Self.list(cli, url)) {
            let result = try cli.run(command)
            #expect(result.status == 2, "\(command): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("cache directory \(cli.cacheDir) belongs to another user (uid 65534)"), "\(command): \(result.stderr)")
        }
        // A .tmp folder handed to another user likewise.
        #expect(chown(cli.cacheDir, 0, 0) == 0)
        let tmp = cli.cacheDir + "/.tmp"
        if !FileManager.default.fileExists(atPath: tmp) { try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: false) }
        #expect(chown(tmp, 65534, 65534) == 0)
        let refused = try cli.run(["cache", "list"])
        #expect(refused.status == 2 && refused.stderr.contains("cache folder \(tmp) belongs to another user"), "\(refused.stderr)")
    }
}
