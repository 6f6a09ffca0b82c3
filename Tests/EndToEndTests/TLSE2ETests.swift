import Foundation
import Testing
import TestSupport

/// Issue 21, item 7: a new TLS connection costs a handshake, not a CA bundle.
/// Debian's libcurl re-read the CA files for every new connection (FACTS.md);
/// now one store serves the whole run.
@Suite struct TLSE2ETests {
    /// The CA files a traced run opened, and the connections it made to `port`.
    static func traced(_ arguments: [String], cli: CLI, port: Int, cacert: String) throws
        -> (result: ProcessResult, caOpens: [String], connects: Int) {
        let trace = cli.cache.path + "/strace.txt"
        let result = try runProcess("/usr/bin/strace", ["-f", "-qq", "-e", "trace=openat,connect", "-o", trace, CLI.binary] + arguments,
                                    environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
        let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        let caOpens = lines.filter { line in
            line.contains("openat(") && (line.contains("/etc/ssl/certs") || line.contains("\"\(cacert)\"") || line.contains("/proc/self/fd/"))
        }
        let connects = lines.filter { $0.contains("connect(") && $0.contains("htons(\(port))") }.count
        return (result, caOpens, connects)
    }

    /// Every request on a new connection (the server closes each one; HTTP/1.1,
    /// since nginx closing HTTP/2 connections at once races the client's next
    /// stream, with or without this change): the CA
    /// files are opened once per run, however many handshakes there are, with
    /// `--cacert` (added to the one store, beside the system's CAs) and without.
    @Test func newConnectionsDoNotReReadTheCABundle() throws {
        let nginx = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: "keepalive_timeout 0;", http2: false)
        let cacert = try #require(nginx.certificatePath)
        let count = 24
        let urls = (0..<count).map { nginx.url("/images/red-64x48.png?n=\($0)") }

        let trusted = try Self.traced(["--json", "--jobs", "2", "--cacert", cacert] + urls, cli: try CLI(), port: nginx.port, cacert: cacert)
        #expect(trusted.result.status == 0, "\(trusted.result.stdout)\(trusted.result.stderr)")
        #expect(trusted.connects >= count, "\(trusted.connects) connections: the server was meant to close each one")
        // The executable's check of the file, the store's read of it, and its read to find
        // system CAs of the same names: a constant (before the store: one per connection).
        #expect(trusted.caOpens.count <= 4, "CA files opened \(trusted.caOpens.count) times: \(trusted.caOpens.prefix(6))")

        // Without --cacert every handshake fails verification, and still reads no CA file again.
        let strict = try Self.traced(["--json", "--jobs", "2", "--retries", "0"] + urls, cli: try CLI(), port: nginx.port, cacert: cacert)
        #expect(strict.result.status == 1)
        let lines = CLI.jsonLines(strict.result.stdout) ?? []
        #expect(lines.filter { ($0["error"] as? [String: Any])?["kind"] as? String == "tls" }.count == count, "\(strict.result.stdout)")
        #expect(strict.connects >= count)
        #expect(strict.caOpens.count <= 2, "CA files opened \(strict.caOpens.count) times: \(strict.caOpens.prefix(6))")
    }
}
