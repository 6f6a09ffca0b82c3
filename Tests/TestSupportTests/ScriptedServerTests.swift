import Foundation
import Glibc
import TestSupport
import Testing

/// Runs /usr/bin/curl quietly (errors still on stderr), never through a proxy.
func curl(_ arguments: [String], timeout: Double = 20) throws -> ProcessResult {
    try runProcess("/usr/bin/curl", ["--silent", "--show-error", "--noproxy", "*"] + arguments, timeout: timeout)
}

func startCurl(_ arguments: [String], timeout: Double = 20) throws -> SpawnedProcess {
    try startProcess("/usr/bin/curl", ["--silent", "--show-error", "--noproxy", "*"] + arguments, timeout: timeout)
}

/// Byte comparison that reports sizes and the first difference instead of dumping whole arrays.
func sameBytes(_ actual: [UInt8], _ expected: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
    if actual == expected { return true }
    let firstDiff = zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    let preview = String(decoding: actual.prefix(200), as: UTF8.self)
    Issue.record(
        "bytes differ: got \(actual.count) bytes, expected \(expected.count); first difference at \(firstDiff.map(String.init) ?? "end"); got starts with: \(preview.debugDescription)",
        sourceLocation: sourceLocation)
    return false
}

func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    var out = [UInt8](repeating: 0, count: count)
    out.withUnsafeMutableBytes { raw in
        var i = 0
        while i < raw.count {
            var word = generator.next()
            for _ in 0..<min(8, raw.count - i) {
                raw[i] = UInt8(truncatingIfNeeded: word)
                word >>= 8
                i += 1
            }
        }
    }
    return out
}

@Suite("ScriptedServer")
struct ScriptedServerTests {
    @Test func okBodyRoundTripsByteExact() throws {
        let server = try ScriptedServer()
        let small = randomBytes(1000)
        let large = randomBytes(700_000)  // exercises the streamed (non single-write) path
        server.route("/small.png", [.ok(small)])
        server.route("/large.png", [.ok(large, contentType: "image/jpeg")])

        let a = try curl([server.url("/small.png")])
        #expect(a.status == 0, "\(a.stderr)")
        #expect(sameBytes(a.stdoutBytes, small))

        let b = try curl(["-w", "\n%{content_type}", server.url("/large.png")])
        #expect(b.status == 0, "\(b.stderr)")
        #expect(sameBytes(Array(b.stdoutBytes.prefix(large.count)), large))
        #expect(String(decoding: b.stdoutBytes.dropFirst(large.count), as: UTF8.self) == "\nimage/jpeg")

        let recorded = server.requests("/small.png")
        #expect(recorded.count == 1)
        #expect(recorded.first?.method == "GET")
        #expect(recorded.first?.header("user-agent")?.hasPrefix("curl/") == true)
        #expect(server.totalRequests == 2)
    }

    @Test func sequenceAdvancesAndLastRepeats() throws {
        let server = try ScriptedServer()
        server.route("/flaky", [.status(503, body: "busy"), .status(503), .ok(Array("fine".utf8), contentType: "text/plain")])
        var codes: [String] = []
        for _ in 0..<4 {
            let r = try curl(["-o", "/dev/null", "-w", "%{http_code}", server.url("/flaky")])
            #expect(r.status == 0)
            codes.append(r.stdout)
        }
        #expect(codes == ["503", "503", "200", "200"])
        #expect(server.requestCount("/flaky") == 4)
    }

    @Test func redirectIsFollowed() throws {
        let server = try ScriptedServer()
        server.route("/old", [.redirect(to: "/new")])
        server.route("/new", [.ok(Array("moved here".utf8), contentType: "text/plain")])
        let r = try curl(["-L", "-w", "|%{num_redirects}", server.url("/old")])
        #expect(r.status == 0)
        #expect(r.stdout == "moved here|1")
        #expect(server.requestCount("/old") == 1)
        #expect(server.requestCount("/new") == 1)

        let absolute = try ScriptedServer()
        absolute.route("/a", [.redirect(to: server.url("/new"), status: 301)])
        let r2 = try curl(["-L", absolute.url("/a")])
        #expect(r2.stdout == "moved here")
    }

    @Test func declaredLengthLieGivesPartialFile() throws {
        let server = try ScriptedServer()
        var lie = ScriptedResponse.ok(randomBytes(100))
        lie.declaredLength = 200
        server.route("/short", [lie])
        let r = try curl(["-o", "/dev/null", server.url("/short")])
        #expect(r.status == 18, "curl: \(r.stderr)")  // CURLE_PARTIAL_FILE
    }

    @Test func closeAfterHeadersGivesPartialFile() throws {
        let server = try ScriptedServer()
        var r = ScriptedResponse.ok(randomBytes(1000))
        r.closeAfterHeaders = true
        server.route("/cut", [r])
        let result = try curl(["-o", "/dev/null", server.url("/cut")])
        #expect(result.status == 18, "curl: \(result.stderr)")
    }

    /// The delay holds the headers back: curl's own 0.3 s limit ends it first (status 28,
    /// not 0 with the body); how long curl took is curl's and the machine's load's business.
    @Test func delayBeforeHeadersTimesOutClient() throws {
        let server = try ScriptedServer()
        server.route("/slow", [ScriptedResponse.ok([1, 2, 3]).delayed(5)])
        let r = try curl(["--max-time", "0.3", server.url("/slow")])
        #expect(r.status == 28, "curl: \(r.stderr)")  // CURLE_OPERATION_TIMEDOUT
        #expect(r.stdoutBytes.isEmpty)
    }

    @Test func generatedBodyStreams50MiB() throws {
        let server = try ScriptedServer()
        var big = ScriptedResponse.ok([], contentType: "application/octet-stream")
        big.generatedBodyLength = 50 * 1024 * 1024
        server.route("/big.bin", [big])
        let r = try curl(["-o", "/dev/null", "-w", "%{size_download}", server.url("/big.bin")])
        #expect(r.status == 0, "curl: \(r.stderr)")
        #expect(r.stdout == "52428800")

        // Generated content is the documented pattern, byte-exact.
        var small = ScriptedResponse()
        small.generatedBodyLength = 200_000
        server.route("/gen", [small])
        let s = try curl([server.url("/gen")])
        #expect(sameBytes(s.stdoutBytes, ScriptedResponse.generatedBytes(count: 200_000)))
    }

    @Test func parallelRequestsOverlap() throws {
        let server = try ScriptedServer()
        server.route("/wait.png", [ScriptedResponse.ok([9, 9, 9]).delayed(0.3)])
        let children = try (0..<6).map { _ in try startCurl([server.url("/wait.png")]) }
        let results = children.map { $0.wait() }
        for r in results {
            #expect(r.status == 0)
            #expect(sameBytes(r.stdoutBytes, [9, 9, 9]))
        }
        #expect(server.requestCount("/wait.png") == 6)
        #expect(server.maxConcurrentRequests >= 2)
        #expect(server.maxConcurrentConnections >= 2)
        #expect(server.connectionsAccepted == 6)
        // A request ends after its response is sent, so curl may exit first: wait for the server's
        // threads to end theirs (10 s only ends a hang). Read at once, this failed on a loaded machine.
        let deadline = Date().addingTimeInterval(10)
        while server.requestsInFlight > 0 && Date() < deadline { usleep(1_000) }
        #expect(server.requestsInFlight == 0)
    }

    @Test func serveDirectoryServesFilesByteExact() throws {
        let dir = try TempDirectory()
        let png = randomBytes(4096)
        try dir.write("img/photo.png", png)
        try dir.write("b.webp", [1, 2, 3])
        let server = try ScriptedServer()
        server.serveDirectory(dir.path, at: "/static", headers: [("Cache-Control", "max-age=60")])

        let r = try curl(["-w", "\n%{content_type}", server.url("/static/img/photo.png")])
        #expect(r.status == 0)
        #expect(sameBytes(Array(r.stdoutBytes.prefix(png.count)), png))
        #expect(String(decoding: r.stdoutBytes.dropFirst(png.count), as: UTF8.self) == "\nimage/png")

        let h = try curl(["-D", "-", "-o", "/dev/null", server.url("/static/b.webp?v=2")])
        #expect(h.stdout.lowercased().contains("content-type: image/webp"))
        #expect(h.stdout.lowercased().contains("cache-control: max-age=60"))

        for missing in ["/static/nope.png", "/static/img", "/static/../etc/passwd", "/other/b.webp"] {
            let m = try curl(["-o", "/dev/null", "-w", "%{http_code}", "--path-as-is", server.url(missing)])
            #expect(m.stdout == "404", "\(missing)")
        }
    }

    @Test func unknownPathIs404() throws {
        let server = try ScriptedServer()
        let r = try curl(["-w", "|%{http_code}", server.url("/does/not/exist")])
        #expect(r.status == 0)
        #expect(r.stdout.hasSuffix("|404"))
        #expect(r.stdout.contains("Not Found"))
        #expect(server.requestCount("/does/not/exist") == 1)
    }

    @Test func keepAliveReusesOneConnection() throws {
        let server = try ScriptedServer()
        server.route("/one", [.ok(Array("1".utf8))])
        server.route("/two", [.ok(Array("2".utf8))])
        let r = try curl([server.url("/one"), server.url("/two")])
        #expect(r.status == 0)
        #expect(r.stdout == "12")
        #expect(server.connectionsAccepted == 1)
        #expect(server.totalRequests == 2)
        let second = server.requests("/two").first
        #expect(second?.indexOnConnection == 1)
        #expect(second?.connectionID == server.requests("/one").first?.connectionID)
    }

    @Test func queryMatchingPrefersExactTarget() throws {
        let server = try ScriptedServer()
        server.route("/q?x=1", [.ok(Array("exact".utf8))])
        server.route("/q", [.ok(Array("path".utf8))])
        #expect(try curl([server.url("/q?x=1")]).stdout == "exact")
        #expect(try curl([server.url("/q?x=2")]).stdout == "path")
        #expect(try curl([server.url("/q")]).stdout == "path")
        #expect(server.requestCount("/q") == 3)
        #expect(server.requestCount("/q?x=1") == 1)
        #expect(server.requests("/q?x=2").first?.query == "x=2")
    }

    @Test func handlerCanAnswerConditionalRequests() throws {
        let server = try ScriptedServer()
        server.route("/etag.png") { request in
            if request.header("If-None-Match") == "\"v1\"" {
                return .notModified(headers: [("ETag", "\"v1\"")])
            }
            return .ok([7, 7], headers: [("ETag", "\"v1\""), ("Cache-Control", "no-cache")])
        }
        let first = try curl(["-o", "/dev/null", "-w", "%{http_code}", server.url("/etag.png")])
        #expect(first.stdout == "200")
        let second = try curl(["-o", "/dev/null", "-w", "%{http_code}", "-H", "If-None-Match: \"v1\"", server.url("/etag.png")])
        #expect(second.stdout == "304")
        #expect(second.status == 0)
    }

    @Test func trickleAndCloseDelimitedBodies() throws {
        let server = try ScriptedServer()
        let body = randomBytes(1000)
        server.route("/trickle", [ScriptedResponse.ok(body).trickled(chunk: 100, interval: 0.02)])
        var closeDelimited = ScriptedResponse.ok(body)
        closeDelimited.omitContentLength = true
        server.route("/close", [closeDelimited])

        let start = Date()
        let t = try curl([server.url("/trickle")])
        #expect(t.status == 0)
        #expect(sameBytes(t.stdoutBytes, body))
        #expect(Date().timeIntervalSince(start) >= 0.15)

        let c = try curl([server.url("/close")])
        #expect(c.status == 0)
        #expect(sameBytes(c.stdoutBytes, body))
    }

    @Test func requestBodiesAreRead() throws {
        let server = try ScriptedServer()
        server.route("/post", [.status(201)])
        let r = try curl(["-o", "/dev/null", "-w", "%{http_code}", "--data-binary", "hello", server.url("/post")])
        #expect(r.stdout == "201")
        let chunked = try curl(
            ["-o", "/dev/null", "-w", "%{http_code}", "-H", "Transfer-Encoding: chunked", "--data-binary", "chunky", server.url("/post")])
        #expect(chunked.stdout == "201")
        let bodies = server.requests("/post").map { String(decoding: $0.body, as: UTF8.self) }
        #expect(bodies == ["hello", "chunky"])
        #expect(server.requests("/post").allSatisfy { $0.method == "POST" })
    }

    @Test func stopWakesSleepersAndFreesThePort() throws {
        let server = try ScriptedServer()
        server.route("/forever", [ScriptedResponse.ok([1]).delayed(30)])
        let child = try startCurl([server.url("/forever")])
        #expect(server.waitForRequests("/forever", count: 1, timeout: 5))
        let start = Date()
        server.stop()
        server.stop()  // idempotent
        #expect(Date().timeIntervalSince(start) < 1)
        let r = child.wait()
        #expect(r.status == 52, "curl: \(r.stderr)")  // CURLE_GOT_NOTHING: connection closed
        #expect(!r.timedOut)
        let again = try curl(["--max-time", "2", server.url("/forever")])
        #expect(again.status == 7)  // CURLE_COULDNT_CONNECT: nobody listens any more
    }

    @Test func dropsAreHarmlessWhenClientDisconnectsMidBody() throws {
        let server = try ScriptedServer()
        var big = ScriptedResponse()
        big.generatedBodyLength = 1 << 30  // 1 GiB, never fully sent
        server.route("/huge", [big])
        let r = try curl(["--max-filesize", "1000", "-o", "/dev/null", server.url("/huge")])
        #expect(r.status == 63)  // CURLE_FILESIZE_EXCEEDED: curl hangs up right after the headers
        let t = try curl(["--max-time", "0.3", "-o", "/dev/null", server.url("/huge")])
        #expect(t.status == 28 || t.status == 0)
        // The server survives and keeps answering.
        server.route("/ping", [.ok(Array("pong".utf8))])
        #expect(try curl([server.url("/ping")]).stdout == "pong")
    }
}
