import Foundation
import Glibc
import Testing
import TestSupport

/// SIGINT and SIGTERM (SPEC §6): no new transfers, those in flight aborted,
/// temporary files removed, one terminal report per URL, the summary, and
/// exit 130 / 143 within a second.
@Suite struct SignalE2ETests {
    let server: ScriptedServer
    let cli: CLI

    init() throws {
        server = try Self.stallingServer()
        cli = try CLI()
    }

    /// A server whose `/stall.png` never finishes in time: the transfer is in
    /// flight, its temporary file in DIR/.tmp growing, when the signal comes.
    static func stallingServer() throws -> ScriptedServer {
        let server = try ScriptedServer()
        var stall = ScriptedResponse(status: 200, headers: [("Content-Type", "image/png")])
        stall.generatedBodyLength = 50_000_000
        stall.trickle = (chunk: 4096, interval: 0.05)
        server.route("/stall.png", stall)
        return server
    }

    var temporaryFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: cli.cacheDir + "/.tmp")) ?? []
    }

    /// Bodies `child` is writing (unnamed files in the cache directory).
    func bodiesBeingWritten(_ child: SpawnedProcess) -> Int { CacheE2E.unnamedFiles(of: child.pid, in: cli.cacheDir) }

    /// Starts the binary and waits until `inFlight` transfers have started
    /// (their temporary files open) and the server has seen one of them.
    func startStalled(_ arguments: [String], inFlight: Int, loadingMarker: String? = nil) async throws -> SpawnedProcess {
        let child = try startProcess(CLI.binary, arguments, environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let loading = loadingMarker.map { child.stdoutSoFar.components(separatedBy: $0).count - 1 } ?? inFlight
            if loading >= inFlight && bodiesBeingWritten(child) >= inFlight && server.requestCount("/stall.png") >= 1 {
                try await Task.sleep(nanoseconds: 100_000_000)   // bytes on their way into the temporary files
                break
            }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        return child
    }

    /// Sends `signal` and waits for the child: exit status 128 + signal within a second,
    /// from the signal to the child's exit (not to when this test, on a busy pool, resumes).
    /// SPEC §6: "the exit status is 130 / 143 within a second"; the bound adds the worst
    /// scheduling lag this process saw meanwhile (on a loaded machine the child runs late too).
    func interruptWithinASecond(_ child: SpawnedProcess, _ signal: Int32) async throws -> ProcessResult {
        let probe = PoolLagProbe()
        defer { probe.stop() }
        child.sendSignal(signal)
        let result = try await child.finish()
        let seconds = try #require(child.secondsFromSignalToExit), lag = probe.worstLag
        #expect(result.status == 128 + signal, "\(result.stderr)")
        #expect(seconds < 1 + lag, "exited \(seconds) s after signal \(signal) (lag \(lag) s)")
        return result
    }

    @Test func sigintCancelsEveryURLOnceAndExits130WithinASecond() async throws {
        let urls = (1...40).map { server.url("/stall.png?\($0)") }
        let child = try await startStalled(["--json", "--jobs", "4"] + urls, inFlight: 4, loadingMarker: "\"phase\":\"loading\"")
        #expect(bodiesBeingWritten(child) == 4, "four bodies were being written")
        #expect(temporaryFiles.isEmpty, "unnamed: nothing to clean up if this process were killed")
        let result = try await interruptWithinASecond(child, SIGINT)

        let lines = try #require(CLI.jsonLines(result.stdout), "every line is JSON: \(result.stdout)")
        let terminal = lines.filter { $0["phase"] != nil && $0["phase"] as? String != "loading" }
        #expect(terminal.count == 40)
        #expect(Set(terminal.compactMap { $0["url"] as? String }) == Set(urls), "each URL exactly once")
        let cancelledInFlight = terminal.filter {
            $0["phase"] as? String == "failure" && ($0["error"] as? [String: Any])?["kind"] as? String == "cancelled"
        }
        let notStarted = terminal.filter { $0["phase"] as? String == "empty" && $0["reason"] as? String == "cancelled" }
        #expect(cancelledInFlight.count == 4)
        #expect(notStarted.count == 36)
        let summary = try #require(lines.last?["summary"] as? [String: Any])
        #expect(summary["total"] as? Int == 40 && summary["failure"] as? Int == 4 && summary["empty"] as? Int == 36)
        #expect(temporaryFiles.isEmpty, "temporary files left: \(temporaryFiles)")
        #expect(server.requestCount("/stall.png") <= 4, "no new transfer started")
    }

    /// SIGINT while a host is paused (it answered 429 with a long
    /// Retry-After): the URLs waiting for it are reported too, at once.
    @Test func sigintWhileAHostIsPausedReportsEveryURLOnce() async throws {
        let paused = try ScriptedServer()
        paused.route("/img.png", ScriptedResponse.status(429, headers: [("Retry-After", "30")]))
        let urls = (1...10).map { paused.url("/img.png?\($0)") } + (1...10).map { server.url("/stall.png?p\($0)") }
        let child = try startProcess(CLI.binary, ["--json", "-v"] + urls, environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir],
                                     timeout: 30)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && !child.stderrSoFar.contains("answered 429: paused for") {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(child.stderrSoFar.contains("host 127.0.0.1:\(paused.port) answered 429: paused for"), "\(child.stderrSoFar)")
        let probe = PoolLagProbe()
        defer { probe.stop() }
        child.sendSignal(SIGINT)
        let result = try await child.finish()
        #expect(result.status == 130, "\(result.stderr)")
        // SPEC §6: "the exit status is 130 / 143 within a second" (the pause is 30 s), plus this
        // machine's scheduling lag meanwhile.
        let seconds = try #require(child.secondsFromSignalToExit), lag = probe.worstLag
        #expect(seconds < 1 + lag, "the run waited for the pause: exited \(seconds) s after SIGINT (lag \(lag) s)")
        let lines = try #require(CLI.jsonLines(result.stdout), "every line is JSON: \(result.stdout)")
        let terminal = lines.filter { $0["phase"] != nil && $0["phase"] as? String != "loading" }
        #expect(terminal.count == 20)
        #expect(Set(terminal.compactMap { $0["url"] as? String }) == Set(urls), "each URL exactly once")
        let summary = try #require(lines.last?["summary"] as? [String: Any])
        #expect(summary["hosts"] as? Int == 2 && summary["hostsPaused"] as? Int == 1, "\(summary)")
        // Those in flight when the 429 came (the host's 6 slots) and none after it.
        #expect(paused.totalRequests <= 6, "\(paused.totalRequests) requests to the paused host")
    }

    @Test func sigtermReportsUnreadInputLinesAndExits143() async throws {
        let listed = (1...30).map { server.url("/stall.png?list\($0)") }
        let list = try cli.cache.write("urls.txt", Array(listed.joined(separator: "\n").utf8))
        let arguments = [server.url("/stall.png?a"), server.url("/stall.png?b")]
        let child = try await startStalled(arguments + ["--jobs", "2", "--input", list, "-v"], inFlight: 2)
        let result = try await interruptWithinASecond(child, SIGTERM)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 32, "\(lines)")
        for url in arguments {
            #expect(lines.filter { $0.hasPrefix("failure  \(url)  cancelled") }.count == 1, "in flight: \(url)")
        }
        for url in listed {
            #expect(lines.filter { $0 == "empty    \(url)  cancelled before it started" }.count == 1, "not started: \(url)")
        }
        #expect(result.stderr.contains("asyncfetch: interrupted by SIGTERM: 32 URLs: 0 success, 2 failure, 30 empty"))
        #expect(temporaryFiles.isEmpty)
    }

    /// Ctrl-C with standard output a full pipe nobody reads (`asyncfetch … | slow-reader`
    /// stuck): the report cannot be written, and the run still ends within a second, 130,
    /// with no temporary file left (it waited 3 s for the report before).
    @Test func sigintWithStdoutAFullPipeNobodyReadsExitsWithinASecond() async throws {
        let urls = (1...40).map { server.url("/stall.png?full\($0)") }
        let fifo = cli.cache.path + "/stdout"
        // Full before the run starts: its first write to stdout blocks for good.
        let pipe = try FullPipe(at: fifo)
        defer { close(pipe.reader) }
        let child = try startProcess("/bin/sh", ["-c", "f=$1; shift; exec \"$@\" >\"$f\"", "sh", fifo, CLI.binary,
                                                 "--json", "--jobs", "4"] + urls,
                                     environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && !(bodiesBeingWritten(child) >= 4 && server.requestCount("/stall.png") >= 4) {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(bodiesBeingWritten(child) == 4, "four bodies were being written")
        let result = try await interruptWithinASecond(child, SIGINT)
        #expect(result.stderr.contains("asyncfetch: the interrupted run cannot write its report (nobody reads standard output)"),
                "\(result.stderr)")
        #expect(temporaryFiles.isEmpty, "temporary files left: \(temporaryFiles)")
        #expect(server.requestCount("/stall.png") <= 4, "no new transfer started")
    }

    /// A body larger than a pipe (not an image: `--any` keeps it), for the `-o` tests below.
    func routeBigBody() -> String {
        var big = ScriptedResponse(status: 200, headers: [("Content-Type", "application/octet-stream"),
                                                          ("Cache-Control", "max-age=600")])
        big.generatedBodyLength = 300_000
        server.route("/big.png", big)
        return server.url("/big.png")
    }

    /// Starts the binary with standard output `fifo`, opened by a shell as `>` does.
    func startWithStdout(_ fifo: String, _ arguments: [String]) throws -> SpawnedProcess {
        try startProcess("/bin/sh", ["-c", "f=$1; shift; exec \"$@\" >\"$f\"", "sh", fifo, CLI.binary] + arguments,
                         environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
    }

    /// The run says `url` ended `cancelled` (on stdout, or on stderr with `-o -`) and gives
    /// the summary on stderr (SPEC §6).
    static func expectCancelledAndSummarised(_ url: String, _ result: ProcessResult, reportOnStderr: Bool = false) {
        let lines = (reportOnStderr ? result.stderr : result.stdout).split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("failure  \(url)  cancelled") }.count == 1, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("asyncfetch: interrupted by SIGINT: 1 URL: 0 success, 1 failure, 0 empty"),
                "\(result.stderr)")
    }

    /// `-o -` into a pipe nobody reads, then Ctrl-C: the body's copy, held up by the full
    /// pipe, ends as the run is cancelled; the URL is reported `cancelled` and the summary
    /// follows (on stderr, where `-o -` puts the report), exit 130 within a second. Before,
    /// the copy waited in write(2) for good and the run was ended by the blocked-output
    /// check, with neither line.
    @Test func sigintWithTheBodyOnAFullStdoutReportsItCancelled() async throws {
        let url = routeBigBody()
        try await interruptWithTheBodyOnAFullStdout(url)
    }

    /// `asyncfetch --any -o - URL` with stdout a pipe whose reader stopped reading once the
    /// copy had begun, then SIGINT: the URL `cancelled` and summarised, exit 130 within a second.
    private func interruptWithTheBodyOnAFullStdout(_ url: String) async throws {
        let fifo = cli.cache.path + "/stdout"
        let pipe = try FullPipe(at: fifo)
        defer { close(pipe.reader) }
        let child = try startWithStdout(fifo, ["--any", "-o", "-", url])
        #expect(try await pipe.makeRoomAndWaitUntilRefilled(), "the body's copy began and waits for room")
        let result = try await interruptWithinASecond(child, SIGINT)
        Self.expectCancelledAndSummarised(url, result, reportOnStderr: true)
    }

    /// `-o -` into a terminal nobody reads (a pseudo-terminal whose master side is never
    /// read: paused, never drained), then Ctrl-C: as with a pipe. A terminal refuses
    /// `RWF_NOWAIT`; the copy writes to its own non-blocking open of it instead. Before, the
    /// copy waited in a blocking write(2) for good and the run waited out the 3 s grace,
    /// with neither line.
    @Test func sigintWithTheBodyOnATerminalNobodyReadsReportsItCancelled() async throws {
        let url = routeBigBody()
        let terminal = try UnreadTerminal()
        defer { terminal.close() }
        let child = try startWithStdout(terminal.name, ["--any", "-o", "-", url])
        #expect(try await terminal.waitUntilFull(), "the body's copy began and waits for room")
        let result = try await interruptWithinASecond(child, SIGINT)
        Self.expectCancelledAndSummarised(url, result, reportOnStderr: true)
        #expect(!result.stderr.contains("cannot write its report"), "\(result.stderr)")
    }

    /// The same with the body a fresh cache hit: its copy is made by the batch's reading task
    /// (not by a load's own task), which the signal cancels too.
    @Test func sigintWithACachedBodyOnAFullStdoutReportsItCancelled() async throws {
        let url = routeBigBody()
        let first = try await cli.run(["--any", url])
        #expect(first.status == 0 && first.stdout.contains("(network"), "\(first.stdout)\(first.stderr)")
        try await interruptWithTheBodyOnAFullStdout(url)
        #expect(server.requestCount("/big.png") == 1, "the second run's body came from the cache")
    }

    /// `-o FIFO` whose reader stopped reading, then Ctrl-C: as with `-o -` above. Before,
    /// nothing looked at the FIFO: the run waited out the 3 s grace.
    @Test func sigintWithTheBodyInAFIFONobodyReadsReportsItCancelled() async throws {
        let url = routeBigBody()
        let fifo = cli.cache.path + "/body"
        let pipe = try FullPipe(at: fifo)
        defer { close(pipe.reader) }
        let child = try startProcess(CLI.binary, ["--any", "-o", fifo, url],
                                     environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
        #expect(try await pipe.makeRoomAndWaitUntilRefilled(), "the body's copy began and waits for room")
        let result = try await interruptWithinASecond(child, SIGINT)
        Self.expectCancelledAndSummarised(url, result)
    }

    /// `-o FIFO` that no reader opens, then Ctrl-C once the body is in the cache: the wait
    /// for a reader ends as the run is cancelled. Before, open(2) waited for good and the
    /// run waited out the 3 s grace.
    @Test func sigintWithTheBodyForAFIFONobodyOpensReportsItCancelled() async throws {
        let url = routeBigBody()
        let fifo = cli.cache.path + "/body"
        let (child, _) = try await startDeliveringToANewFIFO(fifo, url)
        let result = try await interruptWithinASecond(child, SIGINT)
        Self.expectCancelledAndSummarised(url, result)
    }

    /// Makes `fifo`, starts `asyncfetch --any -o FIFO URL` and waits until the body is in the
    /// cache (stored before it is delivered: from then on the run delivers it, or is about to);
    /// returns the child and the entry's path.
    func startDeliveringToANewFIFO(_ fifo: String, _ url: String) async throws -> (SpawnedProcess, String) {
        #expect(mkfifo(fifo, 0o600) == 0)
        let child = try startProcess(CLI.binary, ["--any", "-o", fifo, url],
                                     environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
        let entry = cli.cacheDir + "/" + (try CacheE2E.key(url))
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && !FileManager.default.fileExists(atPath: entry) {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(FileManager.default.fileExists(atPath: entry), "the body is in the cache")
        return (child, entry)
    }

    /// `-o FIFO` whose reader comes late and reads slowly gets the whole body: the copy
    /// waits for a reader to open it, then for room, as a blocking open and write would.
    @Test func aFIFOReaderThatComesLateGetsTheWholeBody() async throws {
        let url = routeBigBody()
        let fifo = cli.cache.path + "/body"
        let (child, entry) = try await startDeliveringToANewFIFO(fifo, url)
        let body = try await offPool { () -> [UInt8] in
            let reader = open(fifo, O_RDONLY)
            defer { close(reader) }
            var body: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                body += chunk[0..<n]
            }
            return body
        }
        let result = try await child.finish()
        #expect(result.status == 0, "\(result.stderr)")
        #expect(body == Array(FileManager.default.contents(atPath: entry) ?? Data()), "\(body.count) bytes")
        #expect(body.count == 300_000)
    }

    /// A run still busy after the first Ctrl-C (here: reporting half a
    /// million unread lines of a list as cancelled) ends at the second one,
    /// without cutting a JSON line in half.
    @Test func aSecondSigintExitsAtOnce() async throws {
        let stalled = [server.url("/stall.png?first"), server.url("/stall.png?second")]
        var text = stalled.joined(separator: "\n") + "\n"
        text.reserveCapacity(20_000_000)
        for index in 0..<500_000 { text += "http://127.0.0.1:9/never/\(index).png\n" }
        let list = try cli.cache.write("urls.txt", Array(text.utf8))
        let child = try await startStalled(["--json", "--jobs", "1", "--input", list], inFlight: 1, loadingMarker: "\"phase\":\"loading\"")
        child.sendSignal(SIGINT)
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(child.isRunning, "still reporting the unread lines")
        let probe = PoolLagProbe()
        defer { probe.stop() }
        child.sendSignal(SIGINT)
        let result = try await child.finish()
        let seconds = try #require(child.secondsFromSignalToExit), lag = probe.worstLag
        #expect(result.status == 130)
        // README: "a second Ctrl-C exits at once" (the half million lines would take seconds), plus
        // this machine's scheduling lag meanwhile.
        #expect(seconds < 0.5 + lag, "exited \(seconds) s after the second SIGINT (lag \(lag) s)")
        #expect(result.stderr.contains("interrupted again"))
        let lines = try #require(CLI.jsonLines(result.stdout), "no line cut in half")
        #expect(lines.count > 2)
        #expect(lines.last?["summary"] == nil, "cut short: no summary")
    }

    /// A second Ctrl-C while the run is blocked writing `--json` lines into a
    /// pipe whose reader stopped reading: the exit comes at once, and the pipe
    /// holds whole lines only, each one JSON object (the writer waits between
    /// two lines; it used to wait inside a 60 KiB write, and the exit left
    /// half a line in the pipe).
    @Test func aSecondSigintWithStdoutAStalledPipeCutsNoLine() async throws {
        // URLs nobody cached: `--offline` reports each at once as `empty`,
        // ~1.9 MB of lines, far more than the pipe holds.
        let urls = (0..<20_000).map { "http://127.0.0.1:9/stalled/\(String(repeating: "x", count: $0 % 41))/\($0).png" }
        let list = try cli.cache.write("urls.txt", Array((urls.joined(separator: "\n") + "\n").utf8))
        let fifo = cli.cache.path + "/stdout"
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let child = try startProcess("/bin/sh", ["-c", "f=$1; shift; exec \"$@\" >\"$f\"", "sh", fifo, CLI.binary,
                                                 "--offline", "--json", "--input", list],
                                     environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
        // Nobody reads: the pipe fills up, and the run blocks writing. How
        // full it gets depends on how the whole lines fall into its pages
        // (each write of at most 4 KiB takes a page of its own), so wait
        // until it holds more than half of its 64 KiB and has stopped
        // growing for half a second.
        var queued: Int32 = 0, previous: Int32 = -1
        var steadySince = Date()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if ioctl(reader, UInt(FIONREAD), &queued) != 0 { queued = 0 }
            if queued != previous { previous = queued; steadySince = Date() }
            if queued > 32 * 1024 && Date().timeIntervalSince(steadySince) > 0.5 { break }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        #expect(child.isRunning, "blocked writing its lines (\(queued) bytes in the pipe)")
        child.sendSignal(SIGINT)
        try await Task.sleep(nanoseconds: 100_000_000)
        child.sendSignal(SIGINT)
        let result = try await child.finish()
        let seconds = try #require(child.secondsFromSignalToExit)
        #expect(result.status == 130, "\(result.stderr)")
        #expect(seconds < 5, "exited \(seconds) s after the second SIGINT")

        var written: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            written += chunk[..<n]
        }
        #expect(written.count > 32 * 1024)
        #expect(written.last == 0x0A, "the pipe ends with a whole line")
        let lines = try #require(CLI.jsonLines(String(decoding: written, as: UTF8.self)), "every line is one JSON object")
        #expect(lines.count > 500)
        #expect(lines.allSatisfy { $0["phase"] as? String == "empty" }, "the first URLs' lines, whole")
    }

    /// The self-pipes that wake a run on a signal (`Interruption`) and a
    /// `--input -` reader were made with `pipe` and then marked close-on-exec
    /// with `fcntl`: in between, a process spawned by another thread kept
    /// both ends. They are made close-on-exec at once (`pipe2` with
    /// `O_CLOEXEC`); glibc's `pipe` is `pipe2(fds, 0)`, which strace shows.
    @Test func theRunsSelfPipesAreCloseOnExecFromTheStart() throws {
        try HeapTrimE2ETests.requireStrace()
        let trace = cli.cache.path + "/pipes.trace"
        let result = try runProcess("/usr/bin/strace", ["-f", "-qq", "-e", "trace=pipe,pipe2", "-o", trace, CLI.binary,
                                                        "--offline", "-i", "-", "http://127.0.0.1:9/x.png"],
                                    environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], stdin: Array("http://127.0.0.1:9/y.png\n".utf8))
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let calls = (try String(contentsOfFile: trace, encoding: .utf8)).split(separator: "\n").filter { $0.contains("pipe") }
        #expect(calls.count >= 2, "the run's pipe and the reader's: \(calls)")
        #expect(calls.allSatisfy { $0.contains("pipe2(") && $0.contains("O_CLOEXEC") }, "\(calls)")
    }
}
