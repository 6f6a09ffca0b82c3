import Foundation
import Testing
import TestSupport

/// Issue 15's behaviours through the built binary, run the way the
/// cache-tests suite runs asyncfetch: one process per request.
@Suite struct HTTPCachingRFCE2ETests {
    static let png = HTTPCachingE2ETests.png

    static func lines(_ result: ProcessResult) throws -> [[String: Any]] {
        try HTTPCachingE2ETests.json(result)
    }

    static func date(_ offset: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: Date(timeIntervalSinceNow: offset))
    }

    /// RFC 9111 §4.2.2 and the options around it.
    @Test func lastModifiedHeuristicAndNoHeuristic() throws {
        let server = try ScriptedServer()
        server.route("/day.png", .ok(Self.png, headers: [("Last-Modified", Self.date(-86_400)), ("ETag", "\"a\"")]))
        let cli = try CLI()
        let url = server.url("/day.png")
        #expect(try cli.run([url, "--default-ttl", "0"]).status == 0)
        let heuristic = try Self.lines(try cli.run([url, "--json", "--default-ttl", "0"]))
        #expect(heuristic.first?["source"] as? String == "cache")
        let off = try Self.lines(try cli.run([url, "--json", "--default-ttl", "0", "--no-heuristic"]))
        #expect(off.map { $0["phase"] as? String } == ["loading", "success", nil])
        #expect(server.requestCount("/day.png") == 2)
    }

    /// RFC 9111 §5.2.1.4 and §5.4: `-H 'Cache-Control: no-cache'` (curl's
    /// habit for "not from a cache"), `max-age=0`, or `Pragma: no-cache`
    /// revalidate a fresh copy, as `--refresh` does; they were sent to the
    /// server and the fresh copy answered without it. `max-age=60` of a
    /// younger copy and `--offline` still answer from the cache.
    @Test func aRequestsNoCacheRevalidatesAFreshCopy() throws {
        let server = try ScriptedServer()
        server.route("/fresh.png", .ok(Self.png, headers: [("Cache-Control", "max-age=3600"), ("ETag", "\"a\"")]))
        let cli = try CLI()
        let url = server.url("/fresh.png")
        #expect(try cli.run([url]).status == 0)
        #expect(try Self.lines(try cli.run([url, "--json"])).first?["source"] as? String == "cache")
        #expect(server.requestCount("/fresh.png") == 1)
        for (n, header) in ["Cache-Control: no-cache", "Pragma: no-cache", "Cache-Control: max-age=0"].enumerated() {
            let result = try cli.run([url, "--json", "-H", header])
            #expect(result.status == 0, "\(header): \(result.stderr)")
            #expect(server.requestCount("/fresh.png") == n + 2, "\(header)")
            #expect(server.requests("/fresh.png").last?.header("If-None-Match") == "\"a\"", "\(header)")
        }
        for arguments in [["-H", "Cache-Control: max-age=60"], ["-H", "Pragma: no-cache", "-H", "Cache-Control: max-stale"],
                          ["--offline", "-H", "Cache-Control: no-cache"]] {
            let result = try cli.run([url, "--json"] + arguments)
            #expect(try Self.lines(result).first?["source"] as? String == "cache", "\(arguments): \(result.stdout)")
        }
        #expect(server.requestCount("/fresh.png") == 4)
    }

    /// RFC 9111 §3: a 503 with freshness is replayed from the cache.
    @Test func aRememberedErrorIsAFailureFromTheCache() throws {
        let server = try ScriptedServer()
        server.route("/down.png", .status(503, headers: [("Cache-Control", "max-age=600")], body: "down"))
        let cli = try CLI()
        let url = server.url("/down.png")
        #expect(try cli.run([url, "--retries", "0"]).status == 1)
        let replay = try cli.run([url, "--json", "--retries", "0"])
        #expect(replay.status == 1)
        let line = try #require(try Self.lines(replay).first)
        #expect(line["phase"] as? String == "failure" && line["source"] as? String == "cache")
        #expect((line["error"] as? [String: Any])?["status"] as? Int == 503)
        #expect(server.requestCount("/down.png") == 1)
    }

    /// RFC 5861 §3: the stale copy at once, then a `refreshed` line, then
    /// the summary; the revalidation reached the server before the exit.
    @Test func staleWhileRevalidateReportsTheStaleCopyThenTheRefresh() throws {
        let server = try ScriptedServer()
        server.route("/swr.png") { request in
            if request.header("If-None-Match") == "\"v1\"" {
                return .notModified(headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=1, stale-while-revalidate=60")])
            }
            return .ok(Self.png, headers: [("Cache-Control", "max-age=1, stale-while-revalidate=60"), ("ETag", "\"v1\"")])
        }
        let cli = try CLI()
        let url = server.url("/swr.png")
        #expect(try cli.run([url]).status == 0)
        Thread.sleep(forTimeInterval: 1.2)
        let result = try cli.run([url, "--json"])
        #expect(result.status == 0)
        let lines = try Self.lines(result)
        #expect(lines.map { $0["phase"] as? String } == ["success", "refreshed", nil], "\(result.stdout)")
        #expect(lines[0]["source"] as? String == "stale" && lines[0]["reason"] as? String == "stale-while-revalidate")
        #expect(lines[1]["source"] as? String == "revalidated" && lines[1]["url"] as? String == url)
        let summary = HTTPCachingE2ETests.summary(lines)
        #expect(summary["total"] as? Int == 1 && summary["stale"] as? Int == 1 && summary["revalidated"] as? Int == 0)
        #expect(server.requests("/swr.png").filter { $0.header("If-None-Match") != nil }.count == 1)

        Thread.sleep(forTimeInterval: 1.2)
        let human = try cli.run([url])
        let rows = human.stdout.split(separator: "\n")
        #expect(rows.count == 2, "\(human.stdout)")
        #expect(rows.first?.hasPrefix("success") == true && rows.first?.contains("(stale, stale-while-revalidate,") == true)
        #expect(rows.last?.hasPrefix("refresh") == true && rows.last?.contains("(revalidated,") == true)
    }

    /// Routes `path` to the image with `cacheControl` until the counter it
    /// returns is set, then to a 404 fresh for 600 s.
    static func goneLater(_ server: ScriptedServer, _ path: String, cacheControl: String) -> LockedCounter {
        let gone = LockedCounter()
        server.route(path) { _ in
            gone.value == 0 ? .ok(Self.png, headers: [("Cache-Control", cacheControl)])
                : .status(404, headers: [("Cache-Control", "max-age=600")], body: "gone")
        }
        return gone
    }

    /// The stale copy a `stale-while-revalidate` window hands out is a
    /// success with a path: a refresh answered by an error status with
    /// freshness of its own (a 404 with max-age) leaves it in place, as the
    /// refresh line says. The 404 was remembered over it, so the path just
    /// reported held an empty file before the process exited, and the next
    /// run replayed the 404.
    @Test func aFailedRefreshLeavesTheStaleCopyItHandedOut() throws {
        let server = try ScriptedServer()
        let gone = Self.goneLater(server, "/swr-gone.png", cacheControl: "max-age=1, stale-while-revalidate=60")
        let cli = try CLI()
        let url = server.url("/swr-gone.png")
        #expect(try cli.run([url]).status == 0)
        gone.set(1)
        Thread.sleep(forTimeInterval: 1.2)
        let result = try cli.run([url, "--json", "--retries", "0"])
        let lines = try Self.lines(result)
        #expect(lines.map { $0["phase"] as? String } == ["success", "refreshed", nil], "\(result.stdout)")
        let path = try #require(lines.first?["path"] as? String)
        let body = Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
        let intact = body == Self.png
        #expect(intact, "the path reported still holds the image (\(body.count) bytes)")
        let again = try Self.lines(try cli.run([url, "--json", "--retries", "0"]))
        #expect(again.first?["source"] as? String == "stale", "still inside its window: \(again)")
    }

    /// The same when the refresh starts after the window has closed: in a
    /// batch it waits for a slot (here behind a slow download, `--jobs 1`),
    /// and the copy was handed out when the list was read. Whether it was
    /// handed out was judged again at the refresh's start, so the 404 was
    /// remembered over the path just reported.
    /// Ordered by events, not by how soon a process starts: the run is started
    /// first and reads its list from a FIFO the test writes. The slow download
    /// takes the one slot; the test writes the URL once the copy is stale by the
    /// image's own `Date` (whole seconds, given by the test), waits for the run
    /// to report it stale, and lets the slow download end only once the 10 s
    /// window has closed (a second after its end by that `Date`). Before, the run
    /// was started 1.1 s into the window and had to read its list within the
    /// 2.9 s left, a process start a loaded machine can outlast; the window is
    /// 10 s so that reading one line from the FIFO and planning it has 9.9 s.
    @Test func aRefreshThatStartsAfterItsWindowLeavesTheStaleCopyItHandedOut() async throws {
        let server = try ScriptedServer()
        let gone = LockedCounter()
        let dated = LockedCounter()   // the image's Date, in seconds since 1970
        server.route("/swr-late.png") { _ in
            guard gone.value == 0 else { return .status(404, headers: [("Cache-Control", "max-age=600")], body: "gone") }
            let now = time(nil)
            dated.set(now)
            return .ok(Self.png, headers: [("Cache-Control", "max-age=1, stale-while-revalidate=10"), ("Date", ScriptedServer.httpDate(now))])
        }
        let slowMayEnd = DispatchSemaphore(value: 0)
        server.route("/slow.png") { _ in
            _ = slowMayEnd.wait(timeout: .now() + 120)   // the bound ends a hang only
            return .ok(Self.png)
        }
        let cli = try CLI()
        let url = server.url("/swr-late.png")
        #expect(try await cli.run([url]).status == 0)
        gone.set(1)
        let fifo = cli.cache.path + "/urls.fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        let run = try startProcess(CLI.binary, ["--json", "--retries", "0", "--jobs", "1", "-i", fifo],
                                   environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 120)
        defer { slowMayEnd.signal() }
        try #require(await InputE2ETests.opens(fifo, run), "never opened the FIFO: \(run.stderrSoFar)")
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)   // the run holds the reading end: no wait
        try #require(writer >= 0, "open: \(String(cString: strerror(errno)))")
        func send(_ line: String) { #expect(write(writer, line + "\n", line.utf8.count + 1) == line.utf8.count + 1) }
        send(server.url("/slow.png"))
        try #require(try await offPool { server.waitForRequests("/slow.png", timeout: 60) }, "the slow download never started")
        try await offPool { Self.waitForWallClock(Double(dated.value) + 1.1) }
        send(url)
        let handedOut = try #require(await Self.firstLine(of: url, in: run), "no line for the URL: \(run.stdoutSoFar)")
        #expect(handedOut["source"] as? String == "stale", "the copy was not handed out stale: \(run.stdoutSoFar)")
        try await offPool { Self.waitForWallClock(Double(dated.value) + 1 + 10 + 1) }
        slowMayEnd.signal()
        close(writer)
        let result = try await run.finish()
        let lines = try Self.lines(result).filter { $0["url"] as? String == url }
        #expect(lines.map { $0["phase"] as? String } == ["success", "refreshed"], "\(result.stdout)")
        #expect(lines.first?["source"] as? String == "stale", "\(result.stdout)")
        let path = try #require(lines.first?["path"] as? String)
        let body = Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
        #expect(body == Self.png, "the path reported still holds the image (\(body.count) bytes)")
        #expect(server.requestCount("/swr-late.png") == 2, "the refresh asked once")
    }

    /// The first whole JSON line `run` prints for `url`; nil when it exits first or after 60 s (a hang).
    static func firstLine(of url: String, in run: SpawnedProcess) async -> [String: Any]? {
        let deadline = Date(timeIntervalSinceNow: 60)
        repeat {
            let whole = run.stdoutSoFar.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            for line in whole {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
                if object["url"] as? String == url { return object }
            }
            try? await Task.sleep(nanoseconds: 5_000_000)
        } while run.isRunning && Date() < deadline
        return nil
    }

    /// Sleeps until the wall clock (what an HTTP age is counted on) reads `seconds` since 1970.
    static func waitForWallClock(_ seconds: Double) {
        let left = seconds - Date().timeIntervalSince1970
        if left > 0 { Thread.sleep(forTimeInterval: left) }
    }

    /// RFC 9111 §4.1 with `Vary: Host`: the Host sent is the URL's
    /// authority unless `-H` replaces it, so naming that same value with
    /// `-H` is the same request (a hit), and another value is not.
    @Test func varyHostComparesTheHostSent() async throws {
        let server = try ScriptedServer()
        server.route("/v.png", .ok(FixtureSite.png, headers: [("Cache-Control", "max-age=3600"), ("Vary", "Host")]))
        let cli = try CLI()
        let url = server.url("/v.png")
        let authority = String(server.baseURL.dropFirst("http://".count))
        #expect(try await cli.run([url]).status == 0)
        let same = try await cli.run([url, "-H", "Host: \(authority.uppercased())", "--json"])
        #expect(try HTTPCachingE2ETests.json(same).first { $0["phase"] as? String == "success" }?["source"] as? String == "cache", "\(same.stdout)")
        let offline = try await cli.run([url, "-H", "Host: \(authority)", "--offline"])
        #expect(offline.status == 0, "\(offline.stdout)")
        #expect(server.requestCount("/v.png") == 1)
        let other = try await cli.run([url, "-H", "Host: other.example", "--offline"])
        #expect(other.status == 1 && other.stdout.contains("Vary: host"), "\(other.stdout)")
        let list = try await cli.run(["cache", "list", "--json"])
        #expect(list.status == 0)
    }
}
