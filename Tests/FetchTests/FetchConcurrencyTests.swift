import Fetch
import Foundation
import Support
import Testing
import TestSupport

/// Many transfers on one client (one multi handle, one thread), connection
/// reuse, and HTTP/2 multiplexing over TLS.
@Suite(.timeLimit(.minutes(3))) struct FetchConcurrencyTests {
    static let png = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + Array(repeating: 3, count: 3000)

    @Test func sequentialFetchesReuseOneConnection() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let harness = try FetchHarness()
        for index in 0..<20 {
            let outcome = try await harness.fetch(server.url("/a.png?n=\(index)"))
            #expect(outcome.body == Self.png)
        }
        #expect(server.totalRequests == 20)
        #expect(server.connectionsAccepted == 1)
        #expect(server.allRequests.map(\.indexOnConnection) == Array(0..<20))
    }

    @Test func fourAtATimeUseAtMostFourConnections() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", ScriptedResponse.ok(Self.png).delayed(0.02))
        let harness = try FetchHarness { $0.maxConnections = 4 }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<10 {
                        let outcome = try await harness.fetch(server.url("/a.png?w=\(worker)&n=\(index)"))
                        #expect(outcome.body == Self.png)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(server.totalRequests == 40)
        #expect(server.connectionsAccepted <= 4, "\(server.connectionsAccepted) connections for 4 workers")
        #expect(server.maxConcurrentRequests >= 2)
    }

    @Test func aHostsConnectionOutlivesARoundOfOtherHosts() async throws {
        // A batch serves hosts in turn: a host's next URL comes after one of
        // every other host. The cache keeps a connection per host for that
        // (`Defaults.idleConnections`), not just twice the few transfers at once.
        let servers = try (0..<24).map { _ in try ScriptedServer() }
        for server in servers { server.route("/a.png", .ok(Self.png)) }
        let harness = try FetchHarness { config in
            config.maxConnections = 2
            config.transferLoops = 1
        }
        for round in 0..<3 {
            for server in servers {
                #expect(try await harness.fetch(server.url("/a.png?r=\(round)")).body == Self.png)
            }
        }
        #expect(servers.map(\.connectionsAccepted) == Array(repeating: 1, count: servers.count))
    }

    @Test func manyTransfersRunAtOnceOnOneClient() async throws {
        let server = try ScriptedServer()
        server.route("/slow.png", ScriptedResponse.ok(Self.png).delayed(0.5))
        let harness = try FetchHarness()
        let bodies = try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for index in 0..<40 { group.addTask { try await harness.fetch(server.url("/slow.png?n=\(index)")).body } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies.count == 40 && bodies.allSatisfy { $0 == Self.png })
        // The server saw all 40 at once (one by one it sees 1): what a time bound
        // (under 8 s for 20 s of answers) told, without depending on the machine's load.
        #expect(server.maxConcurrentRequests == 40)
    }

    @Test func concurrentHTTPSFetchesShareOneHTTP2Connection() async throws {
        let nginx = try NginxServer(root: Paths.fixtures, tls: true, extraConfig: "add_header X-Connection $connection always;")
        let harness = try FetchHarness { $0.caFile = nginx.certificatePath }
        let responses = try await withThrowingTaskGroup(of: FetchResponse?.self) { group in
            for index in 0..<12 {
                group.addTask { try await harness.fetch(nginx.url("/images/red-64x48.png?n=\(index)")).response }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let ok = responses.compactMap { $0 }
        #expect(ok.count == 12)
        #expect(ok.allSatisfy { $0.httpVersion == "2" })
        let connections = Set(ok.compactMap { $0.headers["X-Connection"] })
        #expect(connections.count == 1, "nginx saw connections \(connections)")
        let again = try await harness.fetch(nginx.url("/images/anim-33x17.gif")).response
        #expect(again?.headers["X-Connection"] == connections.first, "a later fetch reuses the connection")
    }
}
