@testable import Fetch
import Foundation
import Support
import Testing
import TestSupport

/// TLS to many hosts (issue 21, item 7): one CA store per client (the
/// system's CAs, plus `--cacert`'s), and a host that never completes its
/// handshake holds up only its own transfers.
@Suite(.timeLimit(.minutes(3))) struct FetchTLSTests {
    static let path = "/images/red-64x48.png"

    static func fetch(_ client: FetchClient, _ url: String) async -> Result<Int, FetchError> {
        do {
            let temp = try TempDirectory()
            let sink = try FileSink(path: temp.file("body"))
            return .success(try await client.fetch(FetchRequest(url: url), into: sink).status)
        } catch let error as FetchError {
            return .failure(error)
        } catch {
            return .failure(FetchError(.io, url: url, detail: "\(error)"))
        }
    }

    /// Header `name` of a 200 from `server` (request `n`), over HTTP/2 or HTTP/1.1 as `http2` says.
    static func header(_ name: String, of client: FetchClient, _ server: NginxServer, _ n: Int, http2: Bool) async throws -> String? {
        let temp = try TempDirectory()
        let request = FetchRequest(url: server.url(Self.path + "?n=\(n)"))
        let response = try await client.fetch(request, into: try FileSink(path: temp.file("body")))
        #expect(response.status == 200)
        #expect(response.httpVersion.hasPrefix(http2 ? "2" : "1.1"), "\(response.httpVersion)")
        return response.headers[name]
    }

    /// One transfer loop, no retries, trusting `servers`' certificates (`--cacert`, a file in `folder`).
    static func oneLoopTrusting(_ servers: [NginxServer], in folder: TempDirectory) throws -> FetchConfiguration {
        let pems = try servers.map { try String(contentsOfFile: try #require($0.certificatePath), encoding: .utf8) }
        try pems.joined().write(toFile: folder.file("cas.pem"), atomically: true, encoding: .utf8)
        var config = FetchConfiguration()
        config.retries = 0
        config.transferLoops = 1
        config.caFile = folder.file("cas.pem")
        return config
    }

    /// `--cacert` adds its CAs to the system's: the servers trusted by either
    /// are both reachable through one client (here the "system" bundle is
    /// server A's certificate, `caFile` server B's).
    @Test func theSystemBundleAndCacertAreBothTrusted() async throws {
        let a = try NginxServer(root: Paths.fixtures, tls: true)
        let b = try NginxServer(root: Paths.fixtures, tls: true)
        var config = FetchConfiguration()
        config.retries = 0
        config.systemCABundle = a.certificatePath

        let systemOnly = FetchClient(configuration: config)
        #expect(try await Self.fetch(systemOnly, a.url(Self.path)).get() == 200)
        guard case .failure(let refused) = await Self.fetch(systemOnly, b.url(Self.path)) else {
            Issue.record("B's certificate is in no trusted bundle")
            return
        }
        #expect(refused.kind == .tls)

        config.caFile = b.certificatePath
        let both = FetchClient(configuration: config)
        #expect(try await Self.fetch(both, a.url(Self.path)).get() == 200)
        #expect(try await Self.fetch(both, b.url(Self.path)).get() == 200)

        // No system bundle on this machine: `--cacert` alone still works.
        config.systemCABundle = "/nonexistent/ca-certificates.crt"
        let cacertOnly = FetchClient(configuration: config)
        #expect(try await Self.fetch(cacertOnly, b.url(Self.path)).get() == 200)
        guard case .failure(let alone) = await Self.fetch(cacertOnly, a.url(Self.path)) else {
            Issue.record("A's certificate is no longer trusted")
            return
        }
        #expect(alone.kind == .tls)
    }

    /// One CA store for the whole client (`CertificateStore`): the system's CAs
    /// in a directory by subject hash, as Debian's `/etc/ssl/certs` (read only
    /// when a handshake asks for an issuer), and a `--cacert` CA, both trusted
    /// by one client over two transfer loops, many connections each; a server
    /// neither trusts still fails as `tls`, in words a user can act on. All
    /// three certificates name the same subject (CN=127.0.0.1): the file's CA
    /// must not hide the directory's.
    @Test func aHashedSystemDirectoryAndCacertBothWorkInOneRun() async throws {
        let a = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: "keepalive_timeout 0;", http2: false)
        let b = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: "keepalive_timeout 0;", http2: false)
        let untrusted = try NginxServer(root: Paths.fixtures, tls: true)
        let certificateA = try #require(a.certificatePath)
        let hash = try runProcess("/usr/bin/openssl", ["x509", "-hash", "-noout", "-in", certificateA])
        try #require(hash.status == 0, "\(hash.stderr)")
        let system = try TempDirectory()
        let hashed = system.file(hash.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + ".0")
        try FileManager.default.copyItem(atPath: certificateA, toPath: hashed)

        var config = FetchConfiguration()
        config.retries = 0
        config.transferLoops = 2
        config.systemCABundle = system.path
        config.caFile = b.certificatePath
        let client = FetchClient(configuration: config)
        // Each server closes every connection: 12 handshakes each, verified with the one store.
        let urls = (0..<12).flatMap { [a.url(Self.path + "?n=\($0)"), b.url(Self.path + "?n=\($0)")] }
        let statuses = await withTaskGroup(of: String?.self) { group in
            for url in urls {
                group.addTask {
                    switch await Self.fetch(client, url) {
                    case .success(let status): return status == 200 ? nil : "\(url): \(status)"
                    case .failure(let error): return "\(url): \(error.message)"
                    }
                }
            }
            var failures: [String] = []
            for await failure in group { if let failure { failures.append(failure) } }
            return failures
        }
        #expect(statuses.isEmpty, "\(statuses)")

        guard case .failure(let refused) = await Self.fetch(client, untrusted.url(Self.path)) else {
            Issue.record("a server trusted by neither the directory nor the file was accepted")
            return
        }
        #expect(refused.kind == .tls)
        #expect(refused.message.contains("certificate"), "\(refused.message)")
    }

    /// `--cacert <(…)`: a CA file that is a pipe can be read only once. With
    /// the system's CAs in a hashed directory the file was read twice (once
    /// for the directory's certificates of the same subjects, once into the
    /// store), so the second read found the pipe empty and every https URL
    /// failed ("error setting certificate file"). It is read once now, and
    /// verification is as strict as before.
    @Test func aCacertThatIsAPipeIsReadOnceAndTrusted() async throws {
        let server = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: "keepalive_timeout 0;", http2: false)
        let untrusted = try NginxServer(root: Paths.fixtures, tls: true)
        let pem = try String(contentsOfFile: try #require(server.certificatePath), encoding: .utf8)
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let written = Array(pem.utf8).withUnsafeBytes { write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])   // the reader sees the certificate, then the end of the file
        try #require(written == pem.utf8.count)

        let system = try TempDirectory()   // a hashed directory with no CA in it
        var config = FetchConfiguration()
        config.retries = 0
        config.systemCABundle = system.path
        config.caFile = "/dev/fd/\(ends[0])"
        let client = FetchClient(configuration: config)
        for n in 0..<3 {   // a new connection each (keepalive 0), each verified by the one store
            #expect(try await Self.fetch(client, server.url(Self.path + "?n=\(n)")).get() == 200)
        }
        guard case .failure(let refused) = await Self.fetch(client, untrusted.url(Self.path)) else {
            Issue.record("a server the pipe's CA does not vouch for was accepted")
            return
        }
        #expect(refused.kind == .tls)
    }

    /// With the system's own CAs (the default, read lazily) a self-signed
    /// server fails as `tls` with libcurl's readable reason, with and without
    /// a `--cacert` that does not vouch for it.
    @Test func anUntrustedServerStillFailsWithTheSystemCAs() async throws {
        let server = try NginxServer(root: Paths.fixtures, tls: true)
        let other = try NginxServer(root: Paths.fixtures, tls: true)
        var config = FetchConfiguration()
        config.retries = 0
        for caFile in [nil, other.certificatePath] {
            config.caFile = caFile
            guard case .failure(let refused) = await Self.fetch(FetchClient(configuration: config), server.url(Self.path)) else {
                Issue.record("a self-signed server was trusted (--cacert \(caFile ?? "none"))")
                continue
            }
            #expect(refused.kind == .tls)
            #expect(refused.message.contains("certificate"), "\(refused.message)")
        }
    }

    /// libcurl 7.88 keeps 8 TLS sessions in a share handle (and evicts the
    /// first slot over and over: the first hosts' sessions stay, a later
    /// host's is gone when 8 others have stored theirs), and closes an HTTP/2
    /// connection without a close_notify, which makes OpenSSL mark the session
    /// it cached not resumable. A host that reconnects after 9 other https
    /// hosts connected before and after it still resumes its session, over
    /// HTTP/1.1 and over HTTP/2 with TLS 1.3 (`TLSSessionShares`,
    /// `ccurl_ssl_ctx_keep_sessions`), verified by the same CAs; a server they
    /// do not vouch for is still refused.
    @Test func aHostReconnectingAfterNineOthersResumesItsTLSSession() async throws {
        // Servers A close every connection, resume sessions (nginx needs a session cache for
        // that) and say whether the handshake resumed one.
        let resuming = """
            keepalive_timeout 0;
            ssl_protocols TLSv1.2 TLSv1.3;
            ssl_session_cache shared:SSL:1m;
            add_header X-TLS-Resumed $ssl_session_reused always;
            """
        let a1 = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: resuming, http2: false)
        let a2 = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: resuming, http2: true)
        let others = try (0..<9).map { _ in
            try NginxServer(root: Paths.fixtures, tls: true, extraConfig: "keepalive_timeout 0;", http2: false)
        }
        let untrusted = try NginxServer(root: Paths.fixtures, tls: true)
        let cas = try TempDirectory()
        let config = try Self.oneLoopTrusting([a1, a2] + others, in: cas)
        let client = FetchClient(configuration: config)
        func resumed(_ server: NginxServer, _ n: Int) async throws -> String? {
            try await Self.header("X-TLS-Resumed", of: client, server, n, http2: server === a2)
        }

        // Each of the other servers closes every connection too: each fetch stores a new session.
        for server in others { #expect(try await Self.fetch(client, server.url(Self.path)).get() == 200) }
        #expect(try await resumed(a1, 0) == ".")   // full handshakes
        #expect(try await resumed(a2, 0) == ".")
        for server in others { #expect(try await Self.fetch(client, server.url(Self.path)).get() == 200) }
        #expect(try await resumed(a1, 1) == "r", "the HTTP/1.1 host's session was gone after 9 other hosts")
        #expect(try await resumed(a2, 1) == "r", "the HTTP/2 host's session was not resumed")
        #expect(try await resumed(a2, 2) == "r", "the HTTP/2 host's session was not resumed twice")
        guard case .failure(let refused) = await Self.fetch(client, untrusted.url(Self.path)) else {
            Issue.record("a server trusted by no CA was accepted")
            return
        }
        #expect(refused.kind == .tls)
    }

    /// One SSL_CTX per transfer loop, not one per TLS connection (libcurl 7.88
    /// makes one for each, about 1.2 M instructions in OpenSSL 3.0): the
    /// context is handed out again, set back to a new one's settings, and
    /// every connection is configured and verified as before. On one loop:
    /// HTTP/1.1 and HTTP/2 servers in turn (ALPN agreed per connection), each
    /// closing every connection, a server no CA vouches for refused between
    /// them, and the trusted ones still accepted after it; an `--insecure`
    /// client's loop beside it accepts the untrusted server, and the verifying
    /// client still refuses it afterwards.
    @Test func oneTLSContextPerLoopStillVerifiesEveryConnection() async throws {
        let h1 = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: "keepalive_timeout 0;", http2: false)
        let h2 = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: "keepalive_timeout 0;", http2: true)
        let untrusted = try NginxServer(root: Paths.fixtures, tls: true)
        let cas = try TempDirectory()
        let config = try Self.oneLoopTrusting([h1, h2], in: cas)
        let client = FetchClient(configuration: config)
        var insecureConfig = config
        insecureConfig.insecure = true
        let insecure = FetchClient(configuration: insecureConfig)

        let before = CurlGlobal.tlsContexts
        for n in 0..<4 {
            #expect(try await Self.fetch(client, h1.url(Self.path + "?n=\(n)")).get() == 200)
            #expect(try await Self.fetch(client, h2.url(Self.path + "?n=\(n)")).get() == 200)
            guard case .failure(let refused) = await Self.fetch(client, untrusted.url(Self.path + "?n=\(n)")) else {
                Issue.record("a server no CA vouches for was accepted on a reused context (round \(n))")
                continue
            }
            #expect(refused.kind == .tls)
            #expect(refused.message.contains("certificate"), "\(refused.message)")
            #expect(try await Self.fetch(insecure, untrusted.url(Self.path + "?i=\(n)")).get() == 200)
        }
        let after = CurlGlobal.tlsContexts
        // 12 connections on the verifying client's loop and 4 on the insecure one's (the untrusted
        // server keeps its connection alive): the verifying loop makes one context and hands it out again.
        #expect(after.reused - before.reused >= 10, "contexts made \(after.made - before.made), reused \(after.reused - before.reused)")
    }

    /// TLS 1.3 suites are offered in browsers' order, AES-128-GCM first
    /// (`Defaults.tls13CipherSuites`; OpenSSL 3.0's own order puts AES-256-GCM
    /// first): a server that takes the client's order, as nginx does by
    /// default, agrees on `TLS_AES_128_GCM_SHA256` over HTTP/1.1 and HTTP/2,
    /// on each new connection of the loop's shared context. A server with an
    /// order of its own still picks by it, and one that allows only ChaCha20
    /// still connects (no suite is dropped); all of them verified.
    @Test func tls13SuitesAreOfferedInBrowsersOrder() async throws {
        let cipher = "keepalive_timeout 0;\nssl_protocols TLSv1.3;\nadd_header X-TLS-Cipher $ssl_cipher always;\n"
        let h1 = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: cipher, http2: false)
        let h2 = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: cipher, http2: true)
        let ownOrder = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: cipher + """
            ssl_prefer_server_ciphers on;
            ssl_conf_command Ciphersuites TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256;
            """, http2: false)
        let chacha = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: cipher + """
            ssl_conf_command Ciphersuites TLS_CHACHA20_POLY1305_SHA256;
            """, http2: false)
        let cas = try TempDirectory()
        let client = FetchClient(configuration: try Self.oneLoopTrusting([h1, h2, ownOrder, chacha], in: cas))
        func suite(_ server: NginxServer, _ n: Int) async throws -> String? {
            try await Self.header("X-TLS-Cipher", of: client, server, n, http2: server === h2)
        }
        for n in 0..<2 {
            #expect(try await suite(h1, n) == "TLS_AES_128_GCM_SHA256")
            #expect(try await suite(h2, n) == "TLS_AES_128_GCM_SHA256")
            #expect(try await suite(ownOrder, n) == "TLS_AES_256_GCM_SHA384")
            #expect(try await suite(chacha, n) == "TLS_CHACHA20_POLY1305_SHA256")
        }
    }

    /// An `--insecure` client's loop (no CA store of its own: libcurl fills a
    /// connection's store itself, and only where it verifies, as for an HTTPS
    /// proxy's certificate) makes a new OpenSSL context for each connection:
    /// a shared one would be set back to an empty store by each new connection
    /// while another's handshake, still under way, verifies with it.
    @Test func insecureLoopKeepsAContextPerConnection() async throws {
        let server = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: "keepalive_timeout 0;", http2: false)
        var config = FetchConfiguration()
        config.retries = 0
        config.transferLoops = 1
        config.insecure = true
        let insecure = FetchClient(configuration: config)
        let before = CurlGlobal.tlsContexts
        for n in 0..<4 {
            #expect(try await Self.fetch(insecure, server.url(Self.path + "?n=\(n)")).get() == 200)
        }
        let after = CurlGlobal.tlsContexts
        // Other tests' contexts can only add to `made`.
        #expect(after.made - before.made >= 4, "contexts made \(after.made - before.made), reused \(after.reused - before.reused)")
    }

    /// A host that accepts connections and never answers the TLS handshake:
    /// ten transfers at once give up after about one connect timeout, not one
    /// after another (libcurl releases transfers waiting to share a
    /// connection, CURLOPT_PIPEWAIT, one at a time), nor after two (those
    /// started over when the first handshake fails keep what is left of
    /// their connect timeout).
    @Test func aHostThatNeverCompletesItsHandshakeHoldsNothingQueuedBehindIt() async throws {
        let listener = try FullBacklogListener(fillBacklog: false)
        var config = FetchConfiguration()
        config.retries = 0
        config.connectTimeout = 1
        config.maxConcurrentTransfers = 10
        let client = FetchClient(configuration: config)
        let port = listener.port
        let temp = try TempDirectory()
        let sinks = try (0..<10).map { try FileSink(path: temp.file("body\($0)")) }
        // Each end noted by its completion (on a completion worker), not by a task that a
        // busy test pool may resume late.
        let ends = Locked([(kind: FetchError.Kind?, at: Double)]())
        let probe = PoolLagProbe()   // a busy machine runs the loop late too: the bounds add the pool's worst lag
        defer { probe.stop() }
        let started = monotonicSeconds()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for (n, sink) in sinks.enumerated() {
                client.start(FetchRequest(url: "https://127.0.0.1:\(port)/\(n).png"), into: sink, handle: FetchHandle()) { result in
                    let kind: FetchError.Kind? = if case .failure(let error) = result { error.kind } else { nil }
                    let all = ends.withLock { ends -> Bool in
                        ends.append((kind, monotonicSeconds()))
                        return ends.count == 10
                    }
                    if all { continuation.resume() }
                }
            }
        }
        let (kinds, elapsed) = ends.withLock { ($0.map(\.kind), ($0.map(\.at).max() ?? started) - started) }
        #expect(kinds.count == 10 && kinds.allSatisfy { $0 == .timeout }, "\(kinds)")
        let lag = probe.worstLag
        #expect(elapsed < 3.5 + lag, "ten handshakes that never complete took \(elapsed) s (pool lag \(lag) s)")
        #expect(elapsed < 1.7 + lag, "ten handshakes that never complete took \(elapsed) s, two connect timeouts (pool lag \(lag) s)")
        withExtendedLifetime(listener) {}
    }

    /// A host its owner gives up on (`endUnansweredAttempts`, as a batch does
    /// when its host scheduler gives a host up): the attempts still in their
    /// handshake, or waiting to share that connection, end at once with the
    /// reason given, as failures of that kind, not as cancelled; so does a
    /// plain http attempt whose request is sent and not answered. An attempt
    /// whose answer has begun goes on.
    /// Ordered by events, not by a 0.4 s sleep a loaded machine can outlast (an
    /// attempt not yet on its loop, or an answer not yet begun, decided the verdict):
    /// the unanswered fetches are started synchronously (each is on its loop's queue
    /// before the end is asked for, and a loop takes its messages in order), the kernel
    /// shows a TLS hello and the plain request waiting at the two holes (`/proc/net/tcp`),
    /// and the answered fetch (an awaited `fetch`, whose transfer the end looks at) has
    /// body bytes counted. That the end came "at once" is the
    /// reason in each error: a connect timeout (6 s) or the transfer timeout (8 s)
    /// would not carry it.
    @Test func endingAHostsUnansweredAttemptsFailsThemAtOnceWithTheReason() async throws {
        let hole = try FullBacklogListener(fillBacklog: false)
        let plainHole = try FullBacklogListener(fillBacklog: false)
        let slow = try ScriptedServer()
        // The status line and headers at once, the body over about 1.2 s.
        slow.route("/img", ScriptedResponse.ok(Array("slow".utf8), contentType: "text/plain").trickled(chunk: 1, interval: 0.3))
        var config = FetchConfiguration()
        config.retries = 0
        config.connectTimeout = 6
        config.timeout = 8
        let progress = TransferProgress()   // counts the slow answer's body bytes, the only body here
        config.progress = progress
        let client = FetchClient(configuration: config)
        let port = hole.port, plainPort = plainHole.port
        async let answered = Self.fetch(client, slow.url("/img"))
        let sent = Self.started(client, "http://127.0.0.1:\(plainPort)/sent.png")   // accepted by the kernel, never read
        let ended = (0..<3).map { Self.started(client, "https://127.0.0.1:\(port)/\($0).png") }
        #expect(await Self.waitForConnections(withData: 1, toPort: plainPort), "the plain request never reached the kernel")
        #expect(await Self.waitForConnections(withData: 1, toPort: port), "no TLS hello reached the kernel")
        let deadline = monotonicSeconds() + 60   // ends a hang only
        while progress.receivedBytes == 0 && monotonicSeconds() < deadline { try await Task.sleep(nanoseconds: 5_000_000) }
        #expect(progress.receivedBytes > 0, "the slow answer never began")
        let reason = "host 127.0.0.1:\(port) was given up on"
        client.endUnansweredAttempts(toHostOf: "HTTPS://127.0.0.1:\(port)", failing: .timeout, detail: reason)
        client.endUnansweredAttempts(toHostOf: "http://127.0.0.1:\(plainPort)/", failing: .timeout, detail: "plain " + reason)
        client.endUnansweredAttempts(toHostOf: slow.baseURL, failing: .connect, detail: "not this one")
        var errors: [FetchError] = []
        for fetch in ended {
            if case .failure(let error) = await fetch.value { errors.append(error) }
        }
        #expect(errors.count == 3 && errors.allSatisfy { $0.kind == .timeout && $0.message.contains(reason) },
                "\(errors.map(\.message))")
        switch await sent.value {
        case .failure(let error): #expect(error.kind == .timeout && error.message.contains("plain " + reason), "\(error.message)")
        case .success(let status): Issue.record("a request nobody read was answered \(status)")
        }
        #expect(try await answered.get() == 200)
        withExtendedLifetime((hole, plainHole)) {}
    }

    /// A fetch started with `FetchClient.start`, so that it is on its loop's
    /// queue when this returns; `value` gives its outcome.
    static func started(_ client: FetchClient, _ url: String) -> StartedFetch {
        let fetch = StartedFetch()
        do {
            let temp = try TempDirectory()
            let sink = try FileSink(path: temp.file("body"))
            client.start(FetchRequest(url: url), into: sink, handle: FetchHandle()) { result in
                withExtendedLifetime(temp) {}
                fetch.finish(result.map(\.status))
            }
        } catch {
            fetch.finish(.failure(FetchError(.io, url: url, detail: "\(error)")))
        }
        return fetch
    }

    /// `/proc/net/tcp`, read to its end (a proc file says it is empty: read until a read gives nothing).
    static func procNetTCP() -> String {
        let fd = open("/proc/net/tcp", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var bytes: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether the kernel comes to hold `count` connections to `port` on 127.0.0.1 that
    /// nobody accepted and whose client has sent bytes (a TLS hello, a request), within
    /// 60 s (the bound ends a hang only): `/proc/net/tcp`'s established sockets of that
    /// local port with a receive queue.
    static func waitForConnections(withData count: Int, toPort port: Int) async -> Bool {
        let local = String(format: "0100007F:%04X", port)
        let deadline = monotonicSeconds() + 60
        while monotonicSeconds() < deadline {
            let table = Self.procNetTCP()
            let waiting = table.split(separator: "\n").dropFirst().filter { row in
                let fields = row.split(separator: " ")
                guard fields.count > 4, fields[1] == local, fields[3] == "01" else { return false }
                let queues = fields[4].split(separator: ":")
                return queues.count == 2 && (Int(queues[1], radix: 16) ?? 0) > 0
            }
            if waiting.count >= count { return true }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return false
    }
}

/// The outcome of a fetch `FetchTLSTests.started` started, awaited once it comes.
final class StartedFetch: Sendable {
    private let state = Locked<(outcome: Result<Int, FetchError>?, waiter: CheckedContinuation<Result<Int, FetchError>, Never>?)>((nil, nil))

    func finish(_ outcome: Result<Int, FetchError>) {
        let waiter = state.withLock { state in
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: outcome)
    }

    var value: Result<Int, FetchError> {
        get async {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    if state.outcome == nil { state.waiter = continuation }
                    return state.outcome
                }
                if let done { continuation.resume(returning: done) }
            }
        }
    }
}
