import Foundation
import Glibc
import Testing
import TestSupport

/// What a new user met on the command line (session 25's audit): a URL
/// argument with a space around it, `-P` names a user could not see or
/// open, a temporary file left in `-P`'s folder unsaid, `-q -v` taken silently.
@Suite struct CommandLineLeftoversE2ETests {
    let server: ScriptedServer
    let cli: CLI
    let png: [UInt8]

    init() throws {
        (server, cli) = try FixtureSite.start()
        png = FixtureSite.png
    }

    /// `" URL "` (pasted, or quoted with a space) was "invalid URL: malformed
    /// scheme"; an input line was trimmed already. An argument is now read
    /// as a line is, for a run and for `cache path`; a space inside a URL
    /// is still refused.
    @Test func aURLArgumentLosesTheWhitespaceAroundIt() throws {
        let url = server.url("/images/red-64x48.png")
        let result = try cli.run(["--json", " \(url) ", "\n\(url)\t"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let lines = CLI.jsonLines(result.stdout) ?? []
        #expect(lines.filter { $0["phase"] as? String == "success" }.map { $0["url"] as? String } == [url], "one URL, fetched once: \(lines)")
        let path = try cli.run(["cache", "path", "  \(url)"])
        let key = try CacheE2E.key(url)
        #expect(path.status == 0 && path.stdout.hasSuffix(key + "\n"), "\(path.stdout)\(path.stderr)")
        let inside = try cli.run(["--json", server.url("/images/red 64x48.png")])
        #expect(inside.status == 1 && inside.stdout.contains("\"invalid-url\""), "\(inside.stdout)")
    }

    /// `-P` with `…/..%2F..%2Fetc` gave `.._.._etc`: hidden by `ls`, named
    /// after a path it is not in, and without the PNG's extension; a name
    /// without an extension (`…/photo`, `show.php?id=7`) got none either.
    @Test func outputDirectoryNamesAreVisibleAndCarryTheImagesExtension() throws {
        let dir = cli.cache.path + "/photos"
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: Paths.packageRoot + "/Fixtures/images/photo-120x80.jpg"))
        for path in ["/a/..%2F..%2Fetc", "/a/photo", "/a/show.php", "/a/a%2Fb.png", "/a/CAT.JPEG", "/a/cat.png"] {
            server.route(path, path.hasSuffix("JPEG") || path.hasSuffix("cat.png") ? .ok(Array(jpeg), contentType: "image/jpeg") : .ok(png))
        }
        let urls = ["/a/..%2F..%2Fetc", "/a/photo", "/a/show.php?id=7", "/a/a%2Fb.png", "/a/CAT.JPEG", "/a/cat.png"].map(server.url)
        let result = try cli.run(["-P", dir] + urls)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir))?.sorted() ?? []
        #expect(names == ["CAT.JPEG", "a_b.png", "cat.png.jpg", "etc.png", "photo.png", "show.php.png"], "\(names)")
        // A template that names the extension itself, and a name a line gives, are left as they are.
        let list = try cli.cache.write("named.txt", Array("\(server.url("/a/photo"))\tmine\n".utf8))
        let named = try cli.run(["-P", dir + "2", "-i", list])
        let md5 = try cli.run(["-P", dir + "3", "--name", "{md5}.{ext}", server.url("/a/photo")])
        #expect(named.status == 0 && md5.status == 0, "\(named.stderr)\(md5.stderr)")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir + "2")) == ["mine"])
        let photoKey = try CacheE2E.key(server.url("/a/photo"))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir + "3")) == [photoKey + ".png"])
    }

    /// A body that could not be renamed into place left its `.part` file in
    /// the folder with nothing said when it could not be removed either
    /// (the unlink's result was dropped). An append-only folder (`chattr +a`:
    /// files may be created, not renamed or removed) shows both.
    @Test func aTemporaryFileThatCannotBeRemovedIsNamed() throws {
        let dir = cli.cache.path + "/appendonly"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let locked = try runProcess("/usr/bin/env", ["chattr", "+a", dir])
        try #require(locked.status == 0, "chattr +a needs root and ext4: \(locked.stderr)")
        defer { _ = try? runProcess("/usr/bin/env", ["chattr", "-a", dir]) }
        let url = server.url("/images/red-64x48.png")
        let result = try cli.run(["--json", "-P", dir, url])
        #expect(result.status == 1)
        let failure = (CLI.jsonLines(result.stdout) ?? []).first { $0["phase"] as? String == "failure" }
        let message = (failure?["error"] as? [String: Any])?["message"] as? String ?? ""
        let left = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
        #expect(left.count == 1 && left[0].hasPrefix(".red-64x48.png.") && left[0].hasSuffix(".part"), "\(left)")
        #expect(message.contains("cannot rename into place: Operation not permitted; the temporary file \(left.first ?? "?") "
                                 + "is left behind (cannot remove it: Operation not permitted)"), "\(message)")
    }

    /// `-q -v` was taken with nothing said of what it means: it is documented
    /// (`--help`, the man page): only the URLs that did not succeed, each with `-v`'s detail.
    @Test func quietAndVerboseTogetherPrintFailuresWithTheirDetail() throws {
        server.route("/gone.png", .status(404))
        let result = try cli.run(["-q", "-v", server.url("/images/red-64x48.png"), server.url("/gone.png")])
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("failure") && lines[0].contains("[http, attempts 1,"), "\(result.stdout)")
        #expect(result.stderr.isEmpty, "no summary: \(result.stderr)")
        let help = try cli.run(["--help"])
        #expect(help.stdout.contains("with -v, each with its detail"), "\(help.stdout)")
    }

    /// `-i FIFO` before anyone opened the FIFO for writing: the run's open
    /// blocked, so SIGTERM waited for the 3 s grace and ended the process
    /// with no summary (a script reading --json got nothing). Now it ends
    /// within a second with the summary; and a FIFO that gets a writer is read as before.
    @Test func aSignalWhileAFIFOHasNoWriterEndsTheRunWithItsSummary() async throws {
        let fifo = cli.cache.path + "/urls.fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        let waiting = try startProcess(CLI.binary, ["--json", "-i", fifo], environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir],
                                       timeout: 30)
        try await Task.sleep(nanoseconds: 300_000_000)
        waiting.sendSignal(SIGTERM)
        let result = try await waiting.finish()
        #expect(result.status == 143, "\(result.stderr)")
        #expect((waiting.secondsFromSignalToExit ?? 9) < 1, "exited \(waiting.secondsFromSignalToExit ?? -1) s after the signal")
        let summary = (CLI.jsonLines(result.stdout) ?? []).last?["summary"] as? [String: Any]
        #expect(summary?["interrupted"] as? String == "SIGTERM" && summary?["total"] as? Int == 0, "\(result.stdout)\(result.stderr)")

        let url = server.url("/images/red-64x48.png")
        let reading = try startProcess(CLI.binary, ["--json", "-i", fifo], environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir],
                                       timeout: 30)
        try await Task.sleep(nanoseconds: 200_000_000)
        let writer = open(fifo, O_WRONLY)
        try #require(writer >= 0)
        let line = Array("\(url)\n".utf8)
        #expect(write(writer, line, line.count) == line.count)
        close(writer)
        let read = try await reading.finish()
        #expect(read.status == 0, "\(read.stdout)\(read.stderr)")
        #expect((CLI.jsonLines(read.stdout) ?? []).contains { $0["url"] as? String == url && $0["phase"] as? String == "success" })
    }
}
