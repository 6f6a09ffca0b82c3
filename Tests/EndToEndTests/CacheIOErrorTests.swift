import Foundation
import Glibc
import Testing
import TestSupport

/// A full disk, a read-only directory and a denied permission are each a
/// per-URL `failure` of kind `io` naming the path, and nothing half-written
/// ever becomes an entry. Tests run as root here, which ignores permission
/// bits: they use real tmpfs mounts and a child running as `nobody`, and are
/// skipped (with the reason shown) where the machine allows neither.
@Suite struct CacheIOErrorTests {
    static let image = "/images/red-64x48.png"

    func failure(_ result: ProcessResult) -> [String: Any]? {
        CLI.jsonLines(result.stdout)?.first { $0["phase"] as? String == "failure" }?["error"] as? [String: Any]
    }

    func expectNothingHalfWritten(_ cli: CLI, dir: String, _ url: String, environment: [String: String] = [:]) throws {
        #expect(try cli.run(["cache", "path", url], environment: environment).status == 1, "\(url) must not be a hit")
        #expect(!FileManager.default.fileExists(atPath: dir + "/" + (try CacheE2E.key(url))))
        #expect(CacheE2E.files(in: dir + "/.tmp").isEmpty, "temporary files must be removed")
    }

    /// A cache on a 1 MiB tmpfs, a `$TMPDIR` of the test's own (where a body
    /// the cache refused is spooled), and the environment that names both.
    func fullCache(_ cli: CLI) throws -> (mount: TmpfsMount, spoolDir: String, environment: [String: String]) {
        let mount = try TmpfsMount(at: cli.cache.path + "/full-fs", size: "1m")
        let spoolDir = cli.cache.path + "/tmp"
        try FileManager.default.createDirectory(atPath: spoolDir, withIntermediateDirectories: true)
        return (mount, spoolDir, ["ASYNCFETCH_CACHE_DIR": mount.path, "TMPDIR": spoolDir])
    }

    @Test(.enabled(if: CacheE2E.canMount, "needs mount -t tmpfs (root in a VM or privileged container)"))
    func aFullFilesystemIsAnIOFailureAndLeavesNothing() throws {
        let server = try FixtureSite.server()
        var big = ScriptedResponse(status: 200, headers: [("Content-Type", "application/octet-stream")])
        big.generatedBodyLength = 2 * 1024 * 1024
        server.route("/big.bin", big)
        let cli = try CLI()
        let mount = try TmpfsMount(at: cli.cache.path + "/small-fs", size: "1m")
        defer { mount.unmount() }
        let env = ["ASYNCFETCH_CACHE_DIR": mount.path]
        let small = server.url(Self.image)
        #expect(try cli.run([small], environment: env).status == 0)

        let url = server.url("/big.bin")
        let result = try cli.run(["--json", "--any", url], environment: env)
        #expect(result.status == 1)
        let error = try #require(failure(result), "\(result.stdout)")
        #expect(error["kind"] as? String == "io")
        let message = error["message"] as? String ?? ""
        #expect(message.contains(mount.path) && message.contains("No space left on device"), "\(message)")
        try expectNothingHalfWritten(cli, dir: mount.path, url, environment: env)
        let verify = try cli.run(["cache", "verify"], environment: env)
        #expect(verify.stdout.contains("verified 1 entry: 1 intact, 0 corrupt removed"), "\(verify.stdout)")
    }

    /// A cache whose disk fills up during the body is reported as a read-only
    /// one is (ReadOnlyCacheE2ETests): with `-o` or `-P` the body is still
    /// delivered, whole, a `success` with `"stored":false` and a warning that
    /// names the cache and the cause; nothing half-written stays in the cache
    /// or in `$TMPDIR`. Before, the same run was a `failure` (kind `io`) and
    /// `-o` got nothing, while a read-only cache delivered.
    @Test(.enabled(if: CacheE2E.canMount, "needs mount -t tmpfs (root in a VM or privileged container)"))
    func aCacheDiskThatFillsUpStillDeliversToOutputWithAWarning() throws {
        let server = try ScriptedServer()
        let bytes = (0..<(2 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) }
        server.route("/big.bin", .ok(bytes, headers: [("Content-Type", "application/octet-stream")]))
        let cli = try CLI()
        let (mount, spoolDir, env) = try fullCache(cli)
        defer { mount.unmount() }
        let url = server.url("/big.bin")
        let out = cli.cache.path + "/big.bin"
        let result = try cli.run(["--json", "--any", "--retries", "0", url, "-o", out], environment: env)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let success = try #require(CLI.jsonLines(result.stdout)?.first { $0["phase"] as? String == "success" }, "\(result.stdout)")
        #expect(success["stored"] as? Bool == false && success["path"] == nil, "\(success)")
        #expect(success["bytes"] as? Int == bytes.count)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(bytes), "the whole body, byte for byte")
        #expect(result.stderr.contains("warning: \(url): the cache could not be updated: cannot write a new entry in \(mount.path)")
                && result.stderr.contains("No space left on device"), "\(result.stderr)")
        try expectNothingHalfWritten(cli, dir: mount.path, url, environment: env)
        #expect(CacheE2E.files(in: spoolDir).isEmpty, "no temporary file left in $TMPDIR")

        // Without -o the body has nowhere to go: the URL's io failure, naming the cache and the cause.
        let nowhere = try cli.run(["--json", "--any", "--retries", "0", url], environment: env)
        #expect(nowhere.status == 1)
        let error = try #require(failure(nowhere), "\(nowhere.stdout)")
        #expect(error["kind"] as? String == "io" && error["status"] == nil, "\(error)")
        let message = error["message"] as? String ?? ""
        #expect(message.contains(mount.path) && message.contains("No space left on device"), "\(message)")
        #expect(CacheE2E.files(in: spoolDir).isEmpty)
    }

    /// Without `-o` or `-P` nobody takes a body the cache refused, yet it
    /// went on into a spool file to its end before the URL failed: a server
    /// that then stalls (here 2 of 3 MiB sent, then silence) made the run
    /// wait for the transfer's timeout and report `timeout`, on a cache disk
    /// of 1 MiB that was full after the first MiB. The transfer now ends at
    /// the cache's refusal: `io`, naming the cache and the cause, at once.
    @Test(.enabled(if: CacheE2E.canMount, "needs mount -t tmpfs (root in a VM or privileged container)"))
    func aCacheDiskThatFillsUpWithNoOutputEndsTheTransferAtOnce() throws {
        let server = try ScriptedServer()
        var stalling = ScriptedResponse(status: 200, headers: [("Content-Type", "application/octet-stream")])
        stalling.generatedBodyLength = 2 * 1024 * 1024
        stalling.declaredLength = 3 * 1024 * 1024
        stalling.stallAfterBody = 30
        server.route("/stalls.bin", stalling)
        let cli = try CLI()
        let (mount, spoolDir, env) = try fullCache(cli)
        defer { mount.unmount() }
        let url = server.url("/stalls.bin")
        let result = try cli.run(["--json", "--any", "--retries", "0", "--timeout", "20", url], environment: env, timeout: 60)
        #expect(result.status == 1)
        let error = try #require(failure(result), "\(result.stdout)")
        #expect(error["kind"] as? String == "io", "\(error)")
        let message = error["message"] as? String ?? ""
        #expect(message.hasPrefix("cannot write a new entry in \(mount.path)") && message.contains("No space left on device"),
                "the cache's words, as when the body was spooled first: \(message)")
        #expect(CacheE2E.files(in: spoolDir).isEmpty, "nothing spooled is left in $TMPDIR")
        try expectNothingHalfWritten(cli, dir: mount.path, url, environment: env)
    }

    /// A cache disk that fills up at the last step, as the entry's record
    /// and name go in (here no inode is left after the body's: neither its
    /// extended attribute nor a sidecar or a name in `.tmp` fits): `-o` still
    /// gets the body, whole, with the warning, as when the body's own writes
    /// are refused. Before, the URL failed (`io`, "cannot create …/.tmp")
    /// and `-o` got nothing.
    @Test(.enabled(if: CacheE2E.canMount, "needs mount -t tmpfs (root in a VM or privileged container)"))
    func aCacheDiskFullAtThePublishStillDeliversToOutput() throws {
        let (server, cli) = try FixtureSite.start()
        let mount = try TmpfsMount(at: cli.cache.path + "/no-inodes", size: "1m", inodes: 2)
        defer { mount.unmount() }
        let spoolDir = cli.cache.path + "/tmp"
        try FileManager.default.createDirectory(atPath: spoolDir, withIntermediateDirectories: true)
        let env = ["ASYNCFETCH_CACHE_DIR": mount.path, "TMPDIR": spoolDir]
        let url = server.url(Self.image)
        let out = cli.cache.path + "/red.png"
        let result = try cli.run(["--json", "--retries", "0", url, "-o", out], environment: env)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let success = try #require(CLI.jsonLines(result.stdout)?.first { $0["phase"] as? String == "success" }, "\(result.stdout)")
        #expect(success["stored"] as? Bool == false && success["path"] == nil, "\(success)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data(FixtureSite.png), "the whole body, byte for byte")
        #expect(result.stderr.contains("warning: \(url): the cache could not be updated: ")
                && result.stderr.contains("No space left on device"), "\(result.stderr)")
        try expectNothingHalfWritten(cli, dir: mount.path, url, environment: env)
        #expect(CacheE2E.files(in: spoolDir).isEmpty, "no temporary file left in $TMPDIR")
    }

    /// `-o` onto a full disk: the URL's io failure names the file and the
    /// cause, no cut-short file is left at that path (a script that finds
    /// one takes it for the image), and the entry stays in the cache. Before,
    /// an empty `-o` file was left behind.
    @Test(.enabled(if: CacheE2E.canMount, "needs mount -t tmpfs (root in a VM or privileged container)"))
    func anOutputFileOnAFullDiskIsAnIOFailureAndIsNotLeftCutShort() throws {
        let (server, cli) = try FixtureSite.start()
        let mount = try TmpfsMount(at: cli.cache.path + "/out-fs", size: "256k")
        defer { mount.unmount() }
        var fs = statvfs()
        #expect(statvfs(mount.path, &fs) == 0)
        try Data(count: Int(fs.f_bavail) * Int(fs.f_bsize)).write(to: URL(fileURLWithPath: mount.path + "/filler.bin"))
        let url = server.url("/images/photo-120x80.jpg")
        let out = mount.path + "/photo.jpg"
        let result = try cli.run(["--json", url, "-o", out])
        #expect(result.status == 1)
        let error = try #require(failure(result), "\(result.stdout)")
        #expect(error["kind"] as? String == "io")
        #expect(error["message"] as? String == "cannot write \(out): No space left on device")
        #expect(!FileManager.default.fileExists(atPath: out), "no cut-short file at the -o path")
        #expect(try cli.run(["--offline", url]).status == 0, "the entry is in the cache")
    }

    /// The body fits exactly: its metadata needs no block of its own (it is
    /// on the body's inode), so the entry is stored whole and verifies.
    @Test(.enabled(if: CacheE2E.canMount, "needs mount -t tmpfs (root in a VM or privileged container)"))
    func aBodyThatFillsTheDiskExactlyIsStoredWhole() throws {
        let server = try ScriptedServer()
        let cli = try CLI()
        let mount = try TmpfsMount(at: cli.cache.path + "/tight-fs", size: "512k")
        defer { mount.unmount() }
        let env = ["ASYNCFETCH_CACHE_DIR": mount.path]
        #expect(try cli.run(["cache", "dir"], environment: env).status == 0)
        try FileManager.default.createDirectory(atPath: mount.path + "/.tmp", withIntermediateDirectories: true)
        var fs = statvfs()
        #expect(statvfs(mount.path, &fs) == 0)
        let pageSize = Int(fs.f_bsize)
        let free = Int(fs.f_bavail) * pageSize
        let filler = free - 16 * pageSize
        try Data(count: filler).write(to: URL(fileURLWithPath: mount.path + "/filler.bin"))
        #expect(statvfs(mount.path, &fs) == 0)
        var body = ScriptedResponse(status: 200, headers: [("Content-Type", "application/octet-stream")])
        body.generatedBodyLength = Int(fs.f_bavail) * pageSize
        server.route("/exact.bin", body)
        let url = server.url("/exact.bin")
        let result = try cli.run(["--json", "--any", url], environment: env)
        #expect(result.status == 0, "\(result.stdout)")
        #expect(try cli.run(["cache", "path", url], environment: env).status == 0)
        let verify = try cli.run(["cache", "verify"], environment: env)
        #expect(verify.status == 0 && verify.stdout.contains(" 0 corrupt removed"), "\(verify.stdout)")
        #expect(CacheE2E.files(in: mount.path + "/.tmp").isEmpty)
        #expect(FileManager.default.fileExists(atPath: mount.path + "/filler.bin"))
    }

    /// Without mount rights a write error is injected with RLIMIT_FSIZE: the
    /// kernel then fails writes past 1 MiB with EFBIG (SIGXFSZ is ignored).
    @Test func anInjectedWriteErrorIsAnIOFailureAndLeavesNothing() throws {
        let server = try ScriptedServer()
        var big = ScriptedResponse(status: 200, headers: [("Content-Type", "application/octet-stream")])
        big.generatedBodyLength = 2 * 1024 * 1024
        server.route("/big.bin", big)
        let cli = try CLI()
        let url = server.url("/big.bin")
        let script = "trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\""
        let result = try runProcess("/bin/bash", ["-c", script, CLI.binary, "--json", "--any", "--retries", "0", url],
                                    environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
        #expect(result.status == 1)
        let error = try #require(failure(result), "\(result.stdout)\(result.stderr)")
        #expect(error["kind"] as? String == "io")
        let message = error["message"] as? String ?? ""
        #expect(message.contains(cli.cacheDir) && message.contains("File too large"), "\(message)")
        try expectNothingHalfWritten(cli, dir: cli.cacheDir, url)
    }

    @Test(.enabled(if: CacheE2E.canMount, "needs mount -o remount,ro (root in a VM or privileged container)"))
    func aReadOnlyCacheServesHitsAndFailsWritesWithIO() throws {
        let (server, cli) = try FixtureSite.start()
        let mount = try TmpfsMount(at: cli.cache.path + "/ro-fs", size: "4m")
        defer { mount.unmount() }
        let env = ["ASYNCFETCH_CACHE_DIR": mount.path]
        let cached = server.url(Self.image)
        #expect(try cli.run([cached], environment: env).status == 0)
        let filesBefore = CacheE2E.files(in: mount.path)
        try mount.remountReadOnly()

        let hit = try cli.run(["--json", cached], environment: env)
        #expect(hit.status == 0)
        #expect(CLI.jsonLines(hit.stdout)?.first?["source"] as? String == "cache")
        #expect(try cli.run(["--offline", cached], environment: env).status == 0)
        #expect(try cli.run(["cache", "path", cached], environment: env).status == 0)
        #expect(CLI.jsonLines(try cli.run(["cache", "list", "--json"], environment: env).stdout)?.count == 1)
        #expect(try cli.run(["cache", "stats"], environment: env).status == 0)

        let url = server.url("/images/photo-120x80.jpg")
        let miss = try cli.run(["--json", url], environment: env)
        #expect(miss.status == 1)
        let error = try #require(failure(miss), "\(miss.stdout)")
        #expect(error["kind"] as? String == "io")
        let message = error["message"] as? String ?? ""
        #expect(message.contains(mount.path) && message.contains("Read-only file system"), "\(message)")

        for command in [["cache", "verify"], ["cache", "prune", "--max-size", "0"], ["cache", "rm", cached], ["cache", "clear"]] {
            let result = try cli.run(command, environment: env)
            #expect(result.status == 2, "\(command): \(result.stderr)")
            #expect(result.stderr.contains(mount.path) && result.stderr.contains("Read-only file system"), "\(result.stderr)")
        }
        #expect(CacheE2E.files(in: mount.path) == filesBefore)
    }

    @Test(.enabled(if: CacheE2E.canDropPrivileges, "needs root and setpriv to run a child as nobody"))
    func aDeniedPermissionIsAnIOFailure() throws {
        let (server, cli) = try FixtureSite.start()
        let cached = server.url(Self.image)
        #expect(try cli.run([cached]).status == 0)
        // Readable by everyone, writable only by root.
        for path in [cli.cache.path, cli.cacheDir] { #expect(chmod(path, 0o755) == 0) }
        for name in CacheE2E.files(in: cli.cacheDir) { #expect(chmod(cli.cacheDir + "/" + name, 0o644) == 0) }
        func asNobody(_ arguments: [String]) throws -> ProcessResult {
            try runProcess("/usr/bin/setpriv", CacheE2E.nobody + [CLI.binary] + arguments,
                           environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
        }
        let hit = try asNobody([cached])
        #expect(hit.status == 0, "\(hit.stderr)")
        #expect(hit.stdout.contains("(cache,"))
        let url = server.url("/images/photo-120x80.jpg")
        let miss = try asNobody(["--json", url])
        #expect(miss.status == 1)
        let error = try #require(failure(miss), "\(miss.stdout)\(miss.stderr)")
        #expect(error["kind"] as? String == "io")
        let message = error["message"] as? String ?? ""
        #expect(message.contains(cli.cacheDir) && message.contains("Permission denied"), "\(message)")
        let verify = try asNobody(["cache", "verify"])
        #expect(verify.status == 2 && verify.stderr.contains(cli.cacheDir), "\(verify.stderr)")
        try expectNothingHalfWritten(cli, dir: cli.cacheDir, url)
    }
}
