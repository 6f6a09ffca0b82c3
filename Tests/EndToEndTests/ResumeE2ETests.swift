import Foundation
import Testing
import TestSupport

/// Resume (SPEC §5, RFC 9110 §14): a transfer cut off after at least 1 MiB
/// keeps its part and validator; the next run asks for the rest with `Range`
/// and `If-Range`, and starts over on a `200`.
@Suite struct ResumeE2ETests {
    static let size = 3 * 1024 * 1024
    static let cut = 1_600_000

    /// Noise (a linear congruential generator seeded by `version`), so that gzip cannot shrink it.
    static func body(version: Int) -> [UInt8] {
        var seed = UInt32(truncatingIfNeeded: version)
        return (0..<size).map { _ in
            seed = seed &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: seed >> 24)
        }
    }

    /// Serves `body(version)` with a strong ETag (`gzip`: in that content
    /// coding); the first full response is cut after `cut` bytes; a Range
    /// request whose If-Range matches gets 206 unless `ignoreRange`.
    func server(version: @escaping @Sendable () -> Int, ignoreRange: Bool = false, gzip: Bool = false) throws -> ScriptedServer {
        let server = try ScriptedServer()
        let full = LockedCounter()
        server.route("/big.bin") { request in
            let v = version()
            let body = gzip ? (try? ContentCodingE2ETests.gzip(Self.body(version: v))) ?? [] : Self.body(version: v)
            let etag = "\"v\(v)\""
            let headers = [("ETag", etag), ("Content-Type", "application/octet-stream")] + (gzip ? [("Content-Encoding", "gzip")] : [])
            if !ignoreRange, let range = request.header("Range"), request.header("If-Range") == etag,
               range.hasPrefix("bytes="), let first = Int(range.dropFirst(6).prefix { $0 != "-" }), first < body.count {
                return ScriptedResponse(status: 206, headers: headers + [("Content-Range", "bytes \(first)-\(body.count - 1)/\(body.count)")],
                                        body: Array(body[first...]))
            }
            var response = ScriptedResponse(status: 200, headers: headers, body: body)
            if full.next() == 1 { response.closeAfterBodyBytes = Self.cut }
            return response
        }
        return server
    }

    /// A server whose `path` gives what `range` makes of a request, when it
    /// makes something, else `body` whole (status 200, `headers`), the first
    /// whole answer cut after `cut` bytes.
    static func cutServer(_ path: String, headers: [(String, String)], body: [UInt8],
                          range: @escaping @Sendable (RecordedRequest) -> ScriptedResponse?) throws -> ScriptedServer {
        let server = try ScriptedServer()
        let full = LockedCounter()
        server.route(path) { request in
            if let answer = range(request) { return answer }
            var response = ScriptedResponse(status: 200, headers: headers, body: body)
            if full.next() == 1 { response.closeAfterBodyBytes = Self.cut }
            return response
        }
        return server
    }

    /// A server for `body(version: 1)`, a cache, and the first run for its URL, cut off: the part is kept.
    func cutOnce() throws -> (CLI, String, ScriptedServer) {
        let server = try server(version: { 1 })
        let cli = try CLI()
        let url = server.url("/big.bin")
        #expect(try cli.run(["--any", "--retries", "0", url]).status == 1)
        #expect(FileManager.default.fileExists(atPath: try partialPath(cli, url)))
        return (cli, url, server)
    }

    func partialPath(_ cli: CLI, _ url: String) throws -> String { cli.cacheDir + "/.partial/" + (try CacheE2E.key(url)) }

    @Test func aCutTransferIsResumedWithRangeAndIfRange() throws {
        let server = try server(version: { 1 })
        let cli = try CLI()
        let url = server.url("/big.bin")
        let first = try cli.run(["--json", "--any", "--retries", "0", url])
        #expect(first.status == 1, "the cut transfer is a failure: \(first.stdout)")
        let kept = try partialPath(cli, url)
        let keptSize = (try? FileManager.default.attributesOfItem(atPath: kept)[.size] as? Int) ?? 0
        #expect(keptSize >= 1 << 20 && keptSize <= Self.cut, "the part received is kept (\(keptSize) bytes)")
        // The failure says the part is kept, so a rerun is seen not to start from nothing.
        let cutShort = try #require(CLI.jsonLines(first.stdout)?.first { $0["phase"] as? String == "failure" })
        let message = try #require((cutShort["error"] as? [String: Any])?["message"] as? String)
        #expect(message.hasSuffix("; \(String(format: "%.1f", Double(keptSize) / 1048576)) MiB kept: the next run asks only for the rest"),
                "\(message)")

        let second = try cli.run(["--json", "--any", url])
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        let resume = try #require(server.requests("/big.bin").last)
        #expect(resume.header("Range") == "bytes=\(keptSize)-")
        #expect(resume.header("If-Range") == "\"v1\"")
        let success = try #require(CLI.jsonLines(second.stdout)?.first { $0["phase"] as? String == "success" })
        let path = try #require(success["path"] as? String)
        // The user asked for the whole image and has it: the result reports it as stored, a 200 of the whole size.
        #expect(success["status"] as? Int == 200, "\(second.stdout)")
        #expect(success["bytes"] as? Int == Self.size)
        // ... and says that only the rest came this time (JSON `resumedFrom`, `-v` "resumed after … kept").
        #expect(success["resumedFrom"] as? Int == keptSize, "\(second.stdout)")
        let stored = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let whole = stored == Self.body(version: 1)   // a Bool: a failed comparison of 3 MB arrays is slow to print
        #expect(whole, "the completed entry is the whole body")
        let meta = try #require(CacheE2E.metadata(body: path))
        #expect(try meta["body-digest"] == "xxh3-128 " + CacheE2E.xxh3(file: path), "hashed whole, like any entry")
        #expect(meta["status"] == "200")
        #expect(!FileManager.default.fileExists(atPath: kept), "the part is used up")
        #expect(try cli.run(["cache", "verify"]).stdout.contains(" 0 corrupt removed"))
        let hit = try cli.run(["--json", "--any", url])
        #expect(!hit.stdout.contains("resumedFrom"), "a hit of the completed entry resumed nothing: \(hit.stdout)")
    }

    /// Ctrl-C during a download past 1 MiB keeps the part, as a connection
    /// cut by the network does (`curl -C -`, `wget -c`: what docs/habits.md
    /// says `-C` becomes). The interrupted run dropped it, and the next run
    /// downloaded the whole body again.
    @Test func anInterruptedTransferKeepsItsPartForTheNextRun() async throws {
        let body = Self.body(version: 1)
        let server = try ScriptedServer()
        server.route("/big.bin") { request in
            let headers = [("ETag", "\"v1\""), ("Content-Type", "application/octet-stream")]
            if let range = request.header("Range"), request.header("If-Range") == "\"v1\"", range.hasPrefix("bytes="),
               let first = Int(range.dropFirst(6).prefix { $0 != "-" }), first < body.count {
                return ScriptedResponse(status: 206, headers: headers + [("Content-Range", "bytes \(first)-\(body.count - 1)/\(body.count)")],
                                        body: Array(body[first...]))
            }
            // The first part, then silence with the connection open: a slow download the user stops.
            var response = ScriptedResponse(status: 200, headers: headers, body: Array(body[..<Self.cut]))
            response.declaredLength = body.count
            response.stallAfterBody = 30
            return response
        }
        let cli = try CLI()
        let url = server.url("/big.bin")
        let child = try startProcess(CLI.binary, ["--any", "--progress", url], environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir],
                                     timeout: 30)
        #expect(try await child.awaitOutput("1.5 MiB", inStderr: true, timeout: 10), "the part arrived: \(child.stderrSoFar)")
        child.sendSignal(SIGINT)
        let interrupted = try await child.finish()
        #expect(interrupted.status == 130, "\(interrupted.stderr)")
        #expect(interrupted.stdout.contains("cancelled; 1.5 MiB kept: the next run asks only for the rest"), "\(interrupted.stdout)")
        let kept = try partialPath(cli, url)
        #expect((try? FileManager.default.attributesOfItem(atPath: kept)[.size] as? Int) == Self.cut, "the part is kept")

        let next = try await cli.run(["--json", "--any", url])
        #expect(next.status == 0, "\(next.stdout)\(next.stderr)")
        #expect(server.requests("/big.bin").last?.header("Range") == "bytes=\(Self.cut)-")
        let success = try #require(CLI.jsonLines(next.stdout)?.first { $0["phase"] as? String == "success" })
        #expect(success["resumedFrom"] as? Int == Self.cut, "\(next.stdout)")
        let stored = Array(try Data(contentsOf: URL(fileURLWithPath: try #require(success["path"] as? String))))
        let whole = stored == body   // a Bool: a failed comparison of 3 MB arrays is slow to print
        #expect(whole, "the completed entry is the whole body")
    }

    /// `-v` names the resume among the HTTP detail.
    @Test func verboseSaysTheBodyWasResumed() throws {
        let (cli, url, server) = try cutOnce()
        let second = try cli.run(["-v", "--any", url])
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        #expect(second.stdout.contains(", attempts 1, resumed after 1.5 MiB kept, "), "\(second.stdout)")
        #expect(server.requests("/big.bin").last?.header("Range") != nil, "the rest was asked for")
    }

    @Test func aFileChangedInBetweenStartsOver() throws {
        let version = LockedCounter()
        let server = try server(version: { version.value })
        version.set(1)
        let cli = try CLI()
        let url = server.url("/big.bin")
        #expect(try cli.run(["--any", "--retries", "0", url]).status == 1)
        #expect(FileManager.default.fileExists(atPath: try partialPath(cli, url)))
        version.set(2)   // the If-Range validator no longer matches: the server sends the whole new body
        let second = try cli.run(["--json", "--any", url])
        #expect(second.status == 0, "\(second.stdout)")
        let path = try #require(CLI.jsonLines(second.stdout)?.first { $0["phase"] as? String == "success" }?["path"] as? String)
        let isNew = Array(try Data(contentsOf: URL(fileURLWithPath: path))) == Self.body(version: 2)
        #expect(isNew, "the new version, whole")
        #expect(try cli.run(["cache", "verify"]).stdout.contains(" 0 corrupt removed"))
    }

    @Test func aServerIgnoringRangeStartsOver() throws {
        let server = try server(version: { 1 }, ignoreRange: true)
        let cli = try CLI()
        let url = server.url("/big.bin")
        #expect(try cli.run(["--any", "--retries", "0", url]).status == 1)
        let second = try cli.run(["--json", "--any", url])
        #expect(second.status == 0, "\(second.stdout)")
        #expect(server.requests("/big.bin").last?.header("Range") != nil, "it was asked for the rest")
        let path = try #require(CLI.jsonLines(second.stdout)?.first { $0["phase"] as? String == "success" }?["path"] as? String)
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: path))) == Self.body(version: 1)
        #expect(whole, "the 200's whole body, not the part plus the whole")
        #expect(!second.stdout.contains("resumedFrom"), "started over: nothing was resumed: \(second.stdout)")
        #expect(!FileManager.default.fileExists(atPath: try partialPath(cli, url)))
    }

    /// A Range answer that cannot continue the kept part: a `416` (the file
    /// shrank), or a `206` starting elsewhere (a server that answers every
    /// Range from byte 0). The part is dropped and the whole body asked for
    /// at once; the second used to fail as `io` in every run, its part kept.
    @Test(arguments: [416, 206])
    func aRangeAnswerThatCannotContinueThePartStartsOver(status: Int) throws {
        let body = Self.body(version: 1)
        let headers = [("ETag", "\"v1\""), ("Content-Type", "application/octet-stream")]
        let server = try Self.cutServer("/big.bin", headers: headers, body: body) { request in
            guard request.header("Range") != nil else { return nil }
            return status == 416
                ? ScriptedResponse(status: 416, headers: [("Content-Range", "bytes */\(body.count)")])
                : ScriptedResponse(status: 206, headers: headers + [("Content-Range", "bytes 0-99/\(body.count)")],
                                   body: Array(body[..<100]))
        }
        let cli = try CLI()
        let url = server.url("/big.bin")
        #expect(try cli.run(["--any", "--retries", "0", url]).status == 1)
        #expect(FileManager.default.fileExists(atPath: try partialPath(cli, url)))
        let second = try cli.run(["--json", "--any", "--retries", "0", url])
        #expect(second.status == 0, "\(second.stdout)")
        let asked = server.requests("/big.bin").map { $0.header("Range") != nil }
        #expect(asked == [false, true, false], "cut, asked for the rest, then the whole body: \(asked)")
        let path = try #require(CLI.jsonLines(second.stdout)?.first { $0["phase"] as? String == "success" }?["path"] as? String)
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: path))) == body
        #expect(whole, "the whole body")
        #expect(!FileManager.default.fileExists(atPath: try partialPath(cli, url)))
    }

    /// A body in a content coding is stored decoded, so a kept part would
    /// count decoded bytes while a `Range` counts coded ones (RFC 9110 §14.1:
    /// a range is of the representation as sent, coding included). Such a
    /// transfer starts over instead; it used to ask for the rest from the
    /// decoded length, got the middle of the gzip stream, and failed
    /// ("compressed body corrupt") in every later run, the part kept.
    @Test func aCodedTransferCutOffStartsOverInsteadOfResuming() throws {
        let server = try server(version: { 1 }, gzip: true)
        let cli = try CLI()
        let url = server.url("/big.bin")
        #expect(try cli.run(["--any", "--retries", "0", url]).status == 1)
        let second = try cli.run(["--json", "--any", "--retries", "0", url])
        #expect(second.status == 0, "\(second.stdout)")
        let path = try #require(CLI.jsonLines(second.stdout)?.first { $0["phase"] as? String == "success" }?["path"] as? String)
        let whole = Array(try Data(contentsOf: URL(fileURLWithPath: path))) == Self.body(version: 1)
        #expect(whole, "the whole body, decoded")
        #expect(server.requests("/big.bin").allSatisfy { $0.header("Range") == nil }, "no range of a coded body is asked for")
        #expect(!FileManager.default.fileExists(atPath: try partialPath(cli, url)))
    }

    /// `--max-size` bounds the body as stored: a resumed one counts its kept
    /// part too. The transfer only saw the rest (under the limit), so a
    /// 3 MiB body was stored with `--max-size 2M`.
    @Test func maxSizeCountsTheKeptPartOfAResumedBody() throws {
        let (cli, url, server) = try cutOnce()
        let second = try cli.run(["--json", "--any", "--max-size", "2M", url])
        #expect(second.status == 1, "\(second.stdout)")
        let failure = try #require(CLI.jsonLines(second.stdout)?.first { $0["phase"] as? String == "failure" })
        #expect((failure["error"] as? [String: Any])?["kind"] as? String == "too-large", "\(second.stdout)")
        #expect(server.requests("/big.bin").last?.header("Range") != nil, "the rest was asked for")
        #expect(try cli.run(["cache", "path", url]).status == 1, "nothing stored")
    }

    /// RFC 9110 §13.1.5: If-Range may carry a date only when it is a strong
    /// validator, a Last-Modified at least a second before the response's
    /// Date (§8.8.2.2); within the same second the file may have changed
    /// again unseen, and the rest of one version would be appended to the
    /// start of another. Such a cut transfer starts over (it was resumed);
    /// one modified an hour before is resumed with `If-Range:` that date.
    @Test(arguments: [0.0, -3600.0])
    func onlyAStrongLastModifiedResumes(modifiedAgo: Double) throws {
        let body = Self.body(version: 1)
        let modified = HTTPCachingRFCE2ETests.date(modifiedAgo)
        let headers = [("Last-Modified", modified), ("Content-Type", "application/octet-stream")]
            + (modifiedAgo == 0 ? [("Date", modified)] : [])
        let server = try Self.cutServer("/dated.bin", headers: headers, body: body) { request in
            guard request.header("If-Range") == modified, let range = request.header("Range"),
                  let first = Int(range.dropFirst(6).prefix { $0 != "-" }) else { return nil }
            return ScriptedResponse(status: 206, headers: headers + [("Content-Range", "bytes \(first)-\(body.count - 1)/\(body.count)")],
                                    body: Array(body[first...]))
        }
        let cli = try CLI()
        let url = server.url("/dated.bin")
        #expect(try cli.run(["--any", "--retries", "0", url]).status == 1)
        let second = try cli.run(["--any", "--retries", "0", url])
        #expect(second.status == 0, "\(second.stdout)")
        let ifRange = server.requests("/dated.bin").compactMap { $0.header("If-Range") }
        #expect(ifRange == (modifiedAgo == 0 ? [] : [modified]), "If-Range sent: \(ifRange)")
        #expect(!FileManager.default.fileExists(atPath: try partialPath(cli, url)))
    }

    @Test func aSmallCutIsNotKept() throws {
        let server = try ScriptedServer()
        var response = ScriptedResponse(status: 200, headers: [("ETag", "\"s\""), ("Content-Type", "application/octet-stream")],
                                        body: Array(repeating: 7, count: 400_000))
        response.closeAfterBodyBytes = 200_000
        server.route("/small.bin", response)
        let cli = try CLI()
        let url = server.url("/small.bin")
        #expect(try cli.run(["--any", "--retries", "0", url]).status == 1)
        #expect(!FileManager.default.fileExists(atPath: try partialPath(cli, url)), "under 1 MiB: nothing kept")
    }
}

/// A counter and value shared with a server's handler thread.
final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    var value: Int { lock.withLock { count } }
    func set(_ value: Int) { lock.withLock { count = value } }
    /// Increments and returns the new value.
    func next() -> Int { lock.withLock { count += 1; return count } }
}

extension ResumeE2ETests {
    @Test func clearRemovesKeptParts() throws {
        let (cli, url, _) = try cutOnce()
        #expect(try cli.run(["cache", "clear"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: try partialPath(cli, url)))
    }

    /// A kept part takes space like an entry (up to --max-size each), so
    /// `cache stats` counts it and `cache prune` bounds it: it is evicted by
    /// its last write, with the least recently used entries. `stats` said 0
    /// bytes and `prune --max-size`/`--max-age` never removed one, so a cron
    /// job's bound did not hold.
    @Test(arguments: [["--max-size", "1K"], ["--max-age", "0"]])
    func statsCountsKeptPartsAndPruneEvictsThem(bound: [String]) throws {
        let (cli, url, _) = try cutOnce()
        let kept = (try? FileManager.default.attributesOfItem(atPath: try partialPath(cli, url))[.size] as? Int) ?? 0
        let stats = try #require(CLI.jsonLines(try cli.run(["cache", "stats", "--json"]).stdout)?.first)
        #expect(stats["bytes"] as? Int == kept && stats["partialFiles"] as? Int == 1, "\(stats)")
        let pruned = try cli.run(["cache", "prune"] + bound)
        #expect(pruned.status == 0 && pruned.stdout.contains("1 partial download"), "\(pruned.stdout)\(pruned.stderr)")
        #expect(!FileManager.default.fileExists(atPath: try partialPath(cli, url)))
    }

    /// `cache rm URL` forgets the URL's kept part too: it left the part
    /// (up to --max-size) in `.partial/` and said "absent" with exit 1.
    @Test func removingAURLRemovesItsKeptPart() throws {
        let (cli, url, _) = try cutOnce()
        #expect(FileManager.default.fileExists(atPath: try partialPath(cli, url)))
        let removed = try cli.run(["cache", "rm", url])
        #expect(removed.status == 0 && removed.stdout == "removed  \(url)\n", "\(removed.stdout)\(removed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: try partialPath(cli, url)))
        let again = try cli.run(["cache", "rm", url])
        #expect(again.status == 1 && again.stdout == "absent   \(url)\n", "\(again.stdout)\(again.stderr)")
    }
}
