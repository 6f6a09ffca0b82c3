import Foundation
import Testing
import TestSupport

/// What a person and a script read: human lines, -q, -v, --json, -o, and
/// URLs with passwords (SPEC §3, §5).
@Suite struct OutputE2ETests {
    let server: ScriptedServer
    let cli: CLI

    init() throws {
        (server, cli) = try FixtureSite.start()
    }

    @Test func humanOutputIsOneLinePerURLWithASummaryOnStderr() async throws {
        let image = server.url("/images/red-64x48.png")
        let missing = server.url("/images/missing.png")
        let never = server.url("/images/never.png")
        let result = try await cli.run([image, missing])
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        let path = cli.cacheDir + "/" + (try CLI.md5sum(image))
        #expect(lines.contains("success  \(image)  \(path)  (network, 153 B, png 64x48)"))
        #expect(lines.contains("failure  \(missing)  HTTP 404 Not Found"))
        #expect(!result.stdout.contains("\u{1B}["), "no colour when stdout is not a terminal")
        #expect(result.stderr.hasPrefix("2 URLs: 1 success, 1 failure, 0 empty (cache 0, network 1, revalidated 0, stale 0); 153 B in "))

        let offline = try await cli.run(["--offline", image, never])
        #expect(offline.stdout.contains("success  \(image)  \(path)  (cache, 153 B, png 64x48)"))
        #expect(offline.stdout.contains("empty    \(never)  not cached"))

        let single = try await cli.run([image])
        #expect(single.status == 0)
        #expect(single.stderr.isEmpty, "one URL: no summary line")
    }

    /// A control character in a directory the user named (`--cache-dir`,
    /// `--output-dir`) is shown as an escape, as in a URL: printed raw it
    /// would retitle or recolour the terminal. JSON keeps the path exact.
    @Test func aControlCharacterInTheCacheOrOutputDirectoryIsShownAsAnEscape() async throws {
        let image = server.url("/images/red-64x48.png")
        let cacheDir = cli.cache.path + "/c\u{1B}]0;pwned\u{07}"
        let outputDir = cli.cache.path + "/out\u{1B}[31m"
        let result = try await cli.run(["--cache-dir", cacheDir, "-P", outputDir, image])
        #expect(result.status == 0, "\(result.stderr)")
        let shownCache = cli.cache.path + "/c\\x1B]0;pwned\\x07/" + (try CLI.md5sum(image))
        #expect(result.stdout.hasPrefix("success  \(image)  \(shownCache)  (network, 153 B, png 64x48)  -> \(cli.cache.path)/out\\x1B[31m/"),
                "\(result.stdout.debugDescription)")
        #expect(!result.stdout.utf8.contains(0x1B) && !result.stdout.utf8.contains(0x07))
        let json = try await cli.run(["--cache-dir", cacheDir, "--json", image])
        let success = try #require(CLI.jsonLines(json.stdout)?.first { $0["phase"] as? String == "success" })
        #expect((success["path"] as? String)?.hasPrefix(cacheDir + "/") == true, "\(json.stdout)")
    }

    @Test func quietPrintsOnlyWhatDidNotSucceedAndVerboseAddsHTTPDetail() async throws {
        let image = server.url("/images/photo-120x80.jpg")
        let missing = server.url("/images/missing.png")
        let quiet = try await cli.run(["-q", image, missing])
        #expect(quiet.status == 1)
        #expect(quiet.stdout == "failure  \(missing)  HTTP 404 Not Found\n")
        #expect(quiet.stderr.isEmpty, "no summary with -q")
        #expect(try await cli.run(["-q", image]).stdout.isEmpty)

        let other = server.url("/images/bitmap-30x20.bmp")
        let verbose = try await cli.run(["-v", other, missing])
        let success = try #require(verbose.stdout.split(separator: "\n").first { $0.hasPrefix("success") })
        #expect(success.contains("  [HTTP/1.1 200, image/bmp, attempts 1, "), "\(success)")
        #expect(success.hasSuffix(" ms]") || success.hasSuffix(" s]"))
        let failure = try #require(verbose.stdout.split(separator: "\n").first { $0.hasPrefix("failure") })
        #expect(failure.contains("HTTP 404 Not Found  [http, attempts 1, "), "\(failure)")
        // A hit made no request: the stored response's status, not a protocol (it said `HTTP 200`,
        // as if a request had been answered without one).
        let hit = try await cli.run(["-v", other])
        #expect(hit.stdout.contains("(cache, ") && hit.stdout.contains("  [stored 200, image/bmp, "), "\(hit.stdout)")
        let offline = try await cli.run(["-v", "--offline", "--max-age", "0", other])
        #expect(offline.stdout.contains("(stale, offline, ") && offline.stdout.contains("  [stored 200, image/bmp, "),
                "\(offline.stdout)")
    }

    /// `-v` said "answered 503: paused for 2.00 s" for a host whose one URL
    /// had just failed with that 503 (no retry left): nothing waited. A
    /// pause is said when a URL waits on it (here the retry of the one URL).
    @Test func verboseSaysAHostIsPausedOnlyWhenAURLWaitsOnIt() async throws {
        let pushing = try ScriptedServer()
        pushing.route("/busy.png", ScriptedResponse.status(503, headers: [("Retry-After", "1")]))
        let url = pushing.url("/busy.png")
        let alone = try await cli.run(["--json", "-v", "--retries", "0", url])
        #expect(alone.status == 1 && alone.stdout.contains("HTTP 503 Service Unavailable"), "\(alone.stdout)")
        #expect(!alone.stderr.contains("paused for"), "\(alone.stderr)")
        #expect(alone.stdout.contains("\"hostsPaused\":1"), "counted all the same: \(alone.stdout)")
        let retried = try await cli.run(["-v", "--retries", "1", url])
        let said = retried.stderr.components(separatedBy: "answered 503: paused for 1.00 s").count - 1
        #expect(said == 1, "the retry waits on the first pause; the second holds nothing back: \(retried.stderr)")
    }

    @Test func jsonLinesHaveTheDocumentedFieldsInOrderAndTheSummaryLast() async throws {
        let image = server.url("/images/red-64x48.png")
        let missing = server.url("/images/missing.png")
        let never = server.url("/images/never.png")
        let first = try await cli.run(["--json", image, missing])
        let raw = first.stdout.split(separator: "\n").map(String.init)
        #expect(raw.count == 5)
        #expect(raw.contains("{\"url\":\"\(image)\",\"phase\":\"loading\"}"))
        let path = cli.cacheDir + "/" + (try CLI.md5sum(image))
        let success = try #require(raw.first { $0.contains("\"phase\":\"success\"") })
        #expect(success.hasPrefix("{\"url\":\"\(image)\",\"phase\":\"success\",\"source\":\"network\",\"path\":\"\(path)\",\"bytes\":153,\"status\":200,\"contentType\":\"image/png\",\"format\":\"png\",\"width\":64,\"height\":48,\"checked\":\"structure\",\"attempts\":1,\"durationMs\":"), "\(success)")
        let failure = try #require(raw.first { $0.contains("\"phase\":\"failure\"") })
        #expect(failure.hasPrefix("{\"url\":\"\(missing)\",\"phase\":\"failure\",\"error\":{\"kind\":\"http\",\"status\":404,\"message\":\"HTTP 404 Not Found\"},\"attempts\":1,\"durationMs\":"), "\(failure)")
        #expect(raw.last?.hasPrefix("{\"summary\":{\"total\":2,\"success\":1,\"failure\":1,\"empty\":0,\"cache\":0,\"network\":1,\"revalidated\":0,\"stale\":0,\"bytes\":153,\"durationMs\":") == true)

        let offline = try await cli.run(["--json", "--offline", never])
        #expect(offline.stdout.hasPrefix("{\"url\":\"\(never)\",\"phase\":\"empty\",\"reason\":\"not-cached\"}\n"))
        for line in (first.stdout + offline.stdout).split(separator: "\n") {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) != nil, "not JSON: \(line)")
        }
    }

    @Test func outputFileAndStdoutGetTheBodyByteForByte() async throws {
        let image = server.url("/images/photo-120x80.jpg")
        let origin = try Data(contentsOf: URL(fileURLWithPath: Paths.fixtures + "/images/photo-120x80.jpg"))
        let target = cli.cache.path + "/photo.jpg"
        let toFile = try await cli.run([image, "-o", target])
        #expect(toFile.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == origin)
        #expect(toFile.stdout.hasPrefix("success  \(image)  "))
        #expect(toFile.stdout.hasSuffix(")  -> \(target)\n"), "the line names the file -o wrote: \(toFile.stdout)")
        let toFileJSON = try await cli.run([image, "--json", "-o", target])
        let line = try #require(CLI.jsonLines(toFileJSON.stdout)?.first { $0["phase"] as? String == "success" })
        #expect(line["output"] as? String == target && line["outputMethod"] as? String == "copy", "\(line)")

        let toStdout = try await cli.run([image, "-o", "-"])
        #expect(toStdout.status == 0)
        #expect(Data(toStdout.stdoutBytes) == origin, "stdout carries only the body")
        #expect(toStdout.stderr.hasPrefix("success  \(image)  "), "the phase line goes to stderr")
        let json = try await cli.run([image, "--json", "-o", "-"])
        #expect(Data(json.stdoutBytes) == origin)
        #expect(json.stderr.contains("\"summary\""))

        let missing = try await cli.run([server.url("/images/missing.png"), "-o", cli.cache.path + "/missing.png"])
        #expect(missing.status == 1)
        #expect(!FileManager.default.fileExists(atPath: cli.cache.path + "/missing.png"))

        let two = try await cli.run([image, image + "?2", "-o", target])
        #expect(two.status == 2)
        #expect(two.stderr.contains("-o/--output takes exactly one URL"))
    }

    /// An `-o` that cannot be written after a `200` is the machine's problem:
    /// kind `io`, a message that names the path and the cause, and no
    /// `error.status` (which a script reads as the server's error status).
    /// Before, the line carried `"status":200`. The cached body is kept.
    @Test func anOutputFileThatCannotBeWrittenIsAnIOFailureWithoutAStatus() async throws {
        let image = server.url("/images/photo-120x80.jpg")
        let target = cli.cache.path + "/no-such-dir/photo.jpg"
        for run in 0..<2 {   // from the network, then from the cache
            let result = try await cli.run(["--json", image, "-o", target])
            #expect(result.status == 1)
            let failure = try #require(CLI.jsonLines(result.stdout)?.first { $0["phase"] as? String == "failure" },
                                       "\(result.stdout)")
            let error = try #require(failure["error"] as? [String: Any])
            #expect(error["kind"] as? String == "io")
            #expect(error["message"] as? String == "cannot write \(target): the folder \(cli.cache.path)/no-such-dir does not exist")
            #expect(error["status"] == nil, "run \(run): \(error)")
        }
        #expect(try await cli.run(["--offline", image]).status == 0, "the body is in the cache")
    }

    /// `-o photos/` for a folder that does not exist said "Is a directory"
    /// (the kernel's answer to a name ending in `/`), and `-o photos/cat.png`
    /// "No such file or directory", of the file about to be made: the message
    /// names what is wrong, a missing folder, a file where a folder should be,
    /// or a folder where the file should be.
    @Test func anOutputFileInAFolderThatCannotHoldItNamesTheFolder() async throws {
        let image = server.url("/images/red-64x48.png")
        let base = cli.cache.path
        try FileManager.default.createDirectory(atPath: base + "/there", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: base + "/plain.txt", contents: Data("x".utf8))
        let cases: [(String, String)] = [
            ("nodir/", "the folder \(base)/nodir does not exist"),
            ("nodir/deeper/cat.png", "the folder \(base)/nodir does not exist"),
            ("there/", "it is a folder, not a file"),
            ("there", "it is a folder, not a file"),
            ("plain.txt/cat.png", "\(base)/plain.txt is not a folder"),
        ]
        for (name, reason) in cases {
            let target = base + "/" + name
            let result = try await cli.run(["--json", image, "-o", target])
            #expect(result.status == 1, "\(name)")
            let failure = CLI.jsonLines(result.stdout)?.first { $0["phase"] as? String == "failure" }
            let message = (failure?["error"] as? [String: Any])?["message"] as? String
            #expect(message == "cannot write \(target): \(reason)", "\(name): \(result.stdout)")
        }
        // Relative to the working directory, as typed.
        let relative = try runProcess(CLI.binary, ["--json", image, "-o", "missing/"],
                                      environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], directory: base)
        #expect(relative.stdout.contains("cannot write missing/: the folder missing does not exist"), "\(relative.stdout)")
    }

    /// Quotes, backslashes and control characters in what is printed are
    /// escaped: every line stays one JSON object that gives the URL back.
    /// (The tab is in an argument: in a list, a tab ends the URL, `URL<TAB>name`.)
    @Test func jsonLinesEscapeWhatTheyQuote() async throws {
        let urls = ["http://127.0.0.1:9/tab\there.png", "http://127.0.0.1:9/a\"b\\c.png", "http://127.0.0.1:9/plain.png",
                    "http://127.0.0.1:9/del\u{7F}.png"]
        let list = cli.cacheDir + "-urls.txt"
        try Data(urls.dropFirst().joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: list))
        defer { try? FileManager.default.removeItem(atPath: list) }
        let result = try await cli.run(["--offline", "--json", urls[0], "--input", list])
        let objects = try #require(CLI.jsonLines(result.stdout), "every line is JSON: \(result.stdout)")
        let printed = objects.compactMap { $0["url"] as? String }
        #expect(printed == urls)
        #expect(result.stdout.contains("a\\\"b\\\\c.png") && result.stdout.contains("tab\\there") && result.stdout.contains("del\\u007f"))
    }

    @Test func aPasswordInAURLNeverAppearsInAnyOutput() async throws {
        let secret = "s3cr3t-Pa55"
        let base = "http://user:\(secret)@127.0.0.1:\(server.port)"
        server.route("/flaky.png", [.status(503), .status(503), .status(503)])
        let list = try cli.cache.write("urls.txt", Array("""
            \(base)/images/red-64x48.png
            \(base)/images/missing.png
            \(base)/flaky.png
            ftp://user:\(secret)@127.0.0.1/x.png
            http://user:\(secret)@127.0.0.1:1/refused.png
            http://user:\(secret)@[::1/bad.png
            http://user:\(secret)@127.0.0.1:notaport/x.png

            """.utf8))
        var outputs: [String] = []
        for flags in [[], ["--json"], ["-v"], ["--json", "-v"], ["--offline"], ["--offline", "--json"], ["--progress"]] {
            let result = try await cli.run(flags + ["--retries", "0", "--connect-timeout", "2", "--input", list])
            #expect(result.status == 1)
            outputs.append(result.stdout + result.stderr)
        }
        let single = try await cli.run(["\(base)/images/red-64x48.png", "-o", cli.cache.path + "/no-such-dir/x.png"])
        outputs.append(single.stdout + single.stderr)
        #expect(single.status == 1)
        let stale = try await cli.run(["--stale-if-error", "--max-age", "0", "--refresh", "\(base)/flaky.png"])
        outputs.append(stale.stdout + stale.stderr)
        for output in outputs {
            #expect(!output.contains(secret), "password leaked: \(output)")
        }
        #expect(outputs[0].contains("user:***@127.0.0.1"), "the URL is shown without its password")
    }

    /// An endless list into `| head -n 1`: the run must stop when it can no
    /// longer write (it would read forever otherwise). That it stopped is the
    /// pipeline's end with the run's SIGPIPE status (a run that read on would
    /// keep the pipeline going until the time limit, which throws); no duration
    /// is asserted, which a loaded machine stretches.
    @Test func aClosedOutputPipeStopsTheRun() async throws {
        let list = "seq 1 1000000000 | sed 's#^#http://127.0.0.1:9/#; s#$#.png#'"
        let command = "\(list) | \(CLI.shellQuote(CLI.binary)) --offline --input - | head -n 1; echo \"status ${PIPESTATUS[2]}\" >&2"
        let result = try await runProcessOffPool("/bin/bash", ["-c", command], environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
        #expect(result.stdout == "empty    http://127.0.0.1:9/1.png  not cached\n")
        #expect(result.stderr.contains("status 141"), "\(result.stderr)")
    }

    /// `-v` host notes go to stderr from the reporter's writer, never from the
    /// thread that ran the host scheduler (a transfer loop or a completion
    /// worker): with stderr a full pipe nobody reads, while one host's pause
    /// and limit changes are noted, another host's transfers in flight still
    /// end in the cache; once stderr is read, the notes are all there, in order.
    @Test func hostNotesOnABlockedStderrDoNotStallTransfers() async throws {
        let pushing = try ScriptedServer(), busy = try ScriptedServer()
        // Each host answers its first URL at once, so that all its others start together.
        // The pushing host then answers 429 (a pause, its limit halved) and 200s: its limit
        // grows back, noted on the completion workers' threads.
        pushing.route("/img.png?0", ScriptedResponse.ok(ImageFixture.png, contentType: "image/png"))
        pushing.route("/img.png", [ScriptedResponse.status(429, headers: [("Retry-After", "1")]).delayed(0.3),
                                   ScriptedResponse.ok(ImageFixture.png, contentType: "image/png").delayed(0.6)])
        // The busy host's others answer after 2 s: in flight while the notes are made.
        busy.route("/img.png?0", ScriptedResponse.ok(ImageFixture.png, contentType: "image/png"))
        busy.route("/img.png", ScriptedResponse.ok(ImageFixture.png, contentType: "image/png").delayed(2))
        let busyURLs = (0..<60).map { busy.url("/img.png?\($0)") }
        let urls = (0..<20).map { pushing.url("/img.png?\($0)") } + busyURLs
        let fifo = cli.cache.path + "/stderr"
        // Full before the run starts: its first write to stderr blocks until the test reads.
        let pipe = try FullPipe(at: fifo)
        let reader = pipe.reader, filled = pipe.filled
        defer { close(reader) }
        let child = try startProcess("/bin/sh", ["-c", "f=$1; shift; exec \"$@\" 2>\"$f\"", "sh", fifo, CLI.binary,
                                                 "--json", "-v", "--no-progress", "--jobs-per-host", "64"] + urls,
                                     environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 60)
        let deadline = Date().addingTimeInterval(15)
        func stored() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: cli.cacheDir)) ?? []).filter { $0.count == 32 }.count
        }
        while Date() < deadline && stored() < busyURLs.count {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(stored() >= busyURLs.count, "\(stored()) bodies stored while stderr was blocked")
        // Now read stderr to its end (the run's end closes it).
        var stderr: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let drainDeadline = Date().addingTimeInterval(30)
        while Date() < drainDeadline {
            let n = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            if n > 0 { stderr += buffer[..<n]; continue }
            if n == 0 { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let result = try await child.finish()
        #expect(result.status == 0, "\(result.stdout)")
        #expect(stderr.count > filled)
        let notes = String(decoding: stderr.dropFirst(filled), as: UTF8.self)
        let name = "host 127.0.0.1:\(pushing.port)"
        let paused = try #require(notes.range(of: "\(name) answered 429: paused for"), "\(notes)")
        let halved = try #require(notes.range(of: "\(name): at most 32 transfers at once (was 64)"), "\(notes)")
        let grown = try #require(notes.range(of: "\(name): at most 33 transfers at once (was 32)"), "\(notes)")
        #expect(paused.lowerBound < halved.lowerBound && halved.lowerBound < grown.lowerBound, "\(notes)")
        let lines = try #require(CLI.jsonLines(result.stdout))
        #expect(lines.filter { $0["phase"] as? String == "success" }.count == urls.count)
    }

    /// `-o FILE` directly in the cache directory is refused before any I/O,
    /// as `--output-dir` is: a file there could replace a cache entry (or be
    /// one: `-o "$(asyncfetch cache path URL)"`). A folder inside it is fine.
    @Test func outputFileInTheCacheDirectoryIsAUsageError() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(FixtureSite.png))
        let cli = try CLI()
        let url = server.url("/a.png")
        #expect(try await cli.run([url]).status == 0)
        let entry = try await cli.run(["cache", "path", url]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let requests = server.requestCount("/a.png")
        for file in [entry, cli.cacheDir + "/photo.png", cli.cacheDir + "/./photo.png"] {
            let result = try await cli.run([url, "-o", file, "--refresh"])
            #expect(result.status == 2, "\(file): \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("is in the cache directory"), "\(result.stderr)")
        }
        #expect(server.requestCount("/a.png") == requests, "refused before any request")
        #expect(try Data(contentsOf: URL(fileURLWithPath: entry)) == Data(FixtureSite.png), "the entry is intact")
        #expect(!FileManager.default.fileExists(atPath: cli.cacheDir + "/photo.png"))
        try FileManager.default.createDirectory(atPath: cli.cacheDir + "/mine", withIntermediateDirectories: false)
        let inside = try await cli.run([url, "-o", cli.cacheDir + "/mine/photo.png"])
        #expect(inside.status == 0, "\(inside.stderr)")
    }

    /// `-v` adds the detail in brackets to every failure line but a failed
    /// background refresh's (`stale-while-revalidate`).
    @Test func verboseDetailsAFailedBackgroundRefresh() async throws {
        let server = try ScriptedServer()
        server.route("/swr.png", [.ok(FixtureSite.png, headers: [("Cache-Control", "max-age=0, stale-while-revalidate=600")]), .status(500)])
        let cli = try CLI()
        let url = server.url("/swr.png")
        #expect(try await cli.run([url]).status == 0)
        let result = try await cli.run(["-v", "--retries", "0", url])
        #expect(result.status == 0, "\(result.stderr)")
        let refresh = result.stdout.split(separator: "\n").last.map(String.init) ?? ""
        #expect(refresh.hasPrefix("refresh  \(url)  background revalidation failed: HTTP 500 Internal Server Error; the stored copy stays  [http, attempts 1, "),
                "\(result.stdout)")
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
}
