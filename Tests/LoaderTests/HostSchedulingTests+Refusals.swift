import Fetch
import Loader
import Support
import Testing
import TestSupport

extension HostSchedulingTests {
    /// A host that refuses every connection is given up on after 3 connect
    /// failures in a row, and the message says so ("connect failures", kind
    /// `connect`), as a host that never answers gets "timeouts": a refusal
    /// reaches the scheduler as one (`HostAttemptGate.outcome`).
    @Test func aHostThatRefusesConnectionsIsGivenUpForConnectFailures() async throws {
        let urls = (0..<8).map { "http://127.0.0.1:1/img?\($0)" }   // nothing listens on port 1
        let loader = loader(jobs: 8, perHost: 3) { options in
            options.acceptAnyContent = true
            options.fetch.retries = 0
        }
        let recorder = Recorder()
        let terminal = await Self.run(loader.batch(ArraySequence(urls), hostNotes: { recorder.note($0) }))
        // The first attempt alone, then up to 3 at once, each refusal freeing a slot for the next:
        // at most 5 are tried before the third refusal gives the host up.
        #expect(terminal.count == 8 && terminal.allSatisfy { $0.phase.error?.kind == .connect },
                "\(terminal.map { $0.phase.error?.message ?? "" })")
        let message = "host 127.0.0.1:1 gave 3 connect failures in a row; not tried again in this run"
        let messages = terminal.map { $0.phase.error?.message ?? "" }
        #expect(messages.filter { $0 == "could not connect: " + message }.count >= 3, "\(messages)")
        #expect(messages.allSatisfy { $0 == "could not connect: " + message || $0.contains("Couldn't connect to server") },
                "\(messages)")
        let host = try #require(HostKey(normalizedURL: urls[0]))
        #expect(recorder.notes == [.gaveUp(host, HostFailure(kind: .connect, message: message))], "\(recorder.notes)")
    }
}

extension HostSchedulingTests {
    /// A host that accepts connections and then closes them ("Empty reply
    /// from server") or resets them before any byte of an answer is given up
    /// on like one that refuses them (over https too, closing them in the TLS
    /// handshake): its remaining URLs fail at once with a
    /// message that says what it did (kind `connect`), and the retries of its
    /// tried URLs stop there. A host whose answers begin and then break (a
    /// body cut short) answers: it is not given up on. Other hosts are not
    /// touched, and every URL gets exactly one terminal report.
    @Test func aHostThatClosesConnectionsBeforeAnsweringIsGivenUpOnLikeOneThatRefuses() async throws {
        let closer = try ScriptedServer(), resetter = try ScriptedServer(), cut = try ScriptedServer(), live = try ScriptedServer()
        let handshake = try ScriptedServer()   // over https: each connection closed in its TLS handshake
        closer.route("/img", .rawBytes([]))
        resetter.route("/img", .reset)
        handshake.dropsConnections = true
        var short = ScriptedResponse.ok(Self.body, contentType: "text/plain")
        short.declaredLength = Self.body.count + 50
        cut.route("/img", short)
        live.route("/img", ScriptedResponse.ok(Self.body, contentType: "text/plain"))
        let servers = [closer, resetter, cut, live]
        let urls = servers.flatMap { server in (0..<8).map { server.url("/img?\($0)") } }
            + (0..<8).map { handshake.httpsURL("/img?\($0)") }
        let loader = loader(jobs: 16, perHost: 3) { options in
            options.acceptAnyContent = true
            options.fetch.retries = 2
        }
        let recorder = Recorder()
        let start = monotonicSeconds()
        let batch = loader.batch(ArraySequence(urls), hostNotes: { recorder.note($0) })
        let terminal = await Self.run(batch)
        let elapsed = monotonicSeconds() - start
        #expect(terminal.map(\.url).sorted() == urls.sorted(), "one terminal report per URL")
        func reports(_ base: String) -> [Phase] { terminal.filter { $0.url.hasPrefix(base + "/") }.map(\.phase) }
        func reports(_ server: ScriptedServer) -> [Phase] { reports(server.baseURL) }
        let dropping: [(ScriptedServer, String, LoadError.Kind, String)] = [
            (closer, closer.baseURL, .network, "network error: Empty reply from server"),
            (resetter, resetter.baseURL, .network, "network error: Recv failure: Connection reset by peer"),
            (handshake, handshake.httpsURL(""), .tls, "TLS error: OpenSSL SSL_connect: SSL_ERROR_SYSCALL"),
        ]
        for (server, base, kind, own) in dropping {
            let failure = HostFailure(kind: .connect, message: "host 127.0.0.1:\(server.port) closed 3 connections in a row "
                                      + "before answering; not tried again in this run")
            let errors = reports(base).map(\.error)
            let givenUp = errors.filter { $0?.kind == .connect && $0?.message == "could not connect: " + failure.message }
            let tried = errors.filter { $0?.kind == kind && $0?.message.hasPrefix(own) == true }
            #expect(givenUp.count + tried.count == 8, "\(errors.map { $0?.message ?? "success" })")
            // One alone, then a few at once (it never answered): 3 closes give it up, and the rest fail untried.
            #expect(givenUp.count >= 8 - 2 * Defaults.hostUnansweredLimit && givenUp.contains { $0?.attempts == 0 },
                    "\(errors.map { $0?.message ?? "success" })")
            #expect(server.connectionsAccepted <= 2 * Defaults.hostUnansweredLimit, "\(server.connectionsAccepted) connections")
            #expect(recorder.notes.filter { $0 == .gaveUp(HostKey(normalizedURL: base)!, failure) }.count == 1,
                    "\(recorder.notes)")
        }
        // Answers that began and broke: its own failure for each URL, each tried (once: not retryable).
        #expect(reports(cut).allSatisfy { $0.error?.message == "network error: transfer closed with 50 bytes remaining to read" },
                "\(reports(cut).map { $0.error?.message ?? "success" })")
        #expect(cut.totalRequests == 8)
        #expect(reports(live).count == 8 && reports(live).allSatisfy { $0.result != nil })
        #expect(recorder.notes.count == 3, "\(recorder.notes)")
        #expect(batch.hostCounts.hosts == 5 && batch.hostCounts.hostsGivenUp == 3)
        #expect(elapsed < 5, "took \(elapsed) s")
    }
}
