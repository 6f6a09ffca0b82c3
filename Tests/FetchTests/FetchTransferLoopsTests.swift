import Fetch
import Foundation
import Support
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Several transfer loops on one client (`FetchConfiguration.transferLoops`):
/// many hosts share them, a host (http or https) stays on one, and its
/// connections are reused. Which loop ran a transfer is seen
/// as a user sees it: a body larger than `Defaults.bufferedBodyLimit` is
/// written to the sink by the thread that receives it.
@Suite(.timeLimit(.minutes(3))) struct FetchTransferLoopsTests {
    static let large = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + Array(repeating: 7, count: 200_000)

    /// Records the threads that write bodies (one sink per fetch, one record for all).
    final class ThreadRecordingSink: BodySink, @unchecked Sendable {
        let threads: Locked<Set<UInt>>
        /// Written on the loop thread, read by the test after `fetch` returns: in a lock, so that
        /// Thread Sanitizer sees the order too (it did not always through the continuation's resume).
        private let written = Locked(0)
        var bytes: Int { written.withLock { $0 } }

        init(recordingInto threads: Locked<Set<UInt>>) {
            self.threads = threads
        }

        func write(_ chunk: UnsafeRawBufferPointer) throws {
            let thread = UInt(pthread_self())
            threads.withLock { _ = $0.insert(thread) }
            written.withLock { $0 += chunk.count }
        }

        func reset() throws { written.withLock { $0 = 0 } }
    }

    /// `rounds` times, `width` fetches at once of `url(round, index)`; the
    /// threads that wrote the bodies, and the responses.
    static func fetchInRounds(_ client: FetchClient, rounds: Int, width: Int,
                              _ url: @escaping @Sendable (Int, Int) -> String) async throws -> (threads: Set<UInt>, responses: [FetchResponse]) {
        let threads = Locked<Set<UInt>>([])
        var responses: [FetchResponse] = []
        for round in 0..<rounds {
            responses += try await withThrowingTaskGroup(of: FetchResponse.self) { group in
                for index in 0..<width {
                    group.addTask {
                        let sink = ThreadRecordingSink(recordingInto: threads)
                        let response = try await client.fetch(FetchRequest(url: url(round, index)), into: sink)
                        #expect(sink.bytes == Self.large.count)
                        return response
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        return (threads.withLock { $0 }, responses)
    }

    @Test func oneBusyPlainHTTPHostStaysOnOneLoopAndReusesItsConnections() async throws {
        let server = try ScriptedServer()
        server.route("/big.png", ScriptedResponse.ok(Self.large).delayed(0.02))
        var configuration = FetchConfiguration()
        configuration.transferLoops = 2
        let client = FetchClient(configuration: configuration)
        let (threads, responses) = try await Self.fetchInRounds(client, rounds: 5, width: 8) { round, index in
            server.url("/big.png?r=\(round)&n=\(index)")
        }
        #expect(responses.count == 40 && responses.allSatisfy { $0.status == 200 })
        #expect(threads.count == 1, "bodies written by \(threads.count) threads: a host stays on one loop (SPEC §6)")
        #expect(server.maxConcurrentRequests == 8)
        #expect(server.connectionsAccepted <= 8, "\(server.connectionsAccepted) connections for 8 at a time")
        #expect(server.maxConcurrentConnections <= 8)
    }

    @Test func manyHostsShareTheLoops() async throws {
        // 16 hosts (ports) on 2 loops: all on one loop by chance once in 2^15 runs.
        let servers = try (0..<16).map { _ in try ScriptedServer() }
        for server in servers { server.route("/big.png", ScriptedResponse.ok(Self.large).delayed(0.02)) }
        var configuration = FetchConfiguration()
        configuration.transferLoops = 2
        let client = FetchClient(configuration: configuration)
        let (threads, responses) = try await Self.fetchInRounds(client, rounds: 2, width: 16) { round, index in
            servers[index].url("/big.png?r=\(round)")
        }
        #expect(responses.count == 32 && responses.allSatisfy { $0.status == 200 })
        #expect(threads.count == 2, "bodies written by \(threads.count) threads")
        // Each host's second URL found its first one's connection, on the same loop.
        #expect(servers.allSatisfy { $0.connectionsAccepted == 1 }, "\(servers.map(\.connectionsAccepted))")
    }

    @Test func oneAtATimeToAPlainHTTPHostStaysOnOneLoopAndOneConnection() async throws {
        let server = try ScriptedServer()
        server.route("/big.png", .ok(Self.large))
        var configuration = FetchConfiguration()
        configuration.transferLoops = 4
        let client = FetchClient(configuration: configuration)
        let (threads, responses) = try await Self.fetchInRounds(client, rounds: 12, width: 1) { round, _ in
            server.url("/big.png?r=\(round)")
        }
        #expect(responses.count == 12)
        #expect(threads.count == 1)
        #expect(server.connectionsAccepted == 1)
    }

    @Test func httpsTransfersToOneHostStayOnOneLoopAndOneConnection() async throws {
        let root = try TempDirectory(prefix: "asyncfetch-loops")
        chmod(try root.write("big.png", Self.large), 0o644)   // nginx's workers run as nobody
        chmod(root.path, 0o755)
        let nginx = try NginxServer(root: root.path, tls: true, extraConfig: "add_header X-Connection $connection always;")
        var configuration = FetchConfiguration()
        configuration.transferLoops = 4
        configuration.caFile = nginx.certificatePath
        let client = FetchClient(configuration: configuration)
        let (threads, responses) = try await Self.fetchInRounds(client, rounds: 3, width: 8) { round, index in
            nginx.url("/big.png?r=\(round)&n=\(index)")
        }
        #expect(responses.count == 24 && responses.allSatisfy { $0.status == 200 && $0.httpVersion == "2" })
        #expect(threads.count == 1, "bodies written by \(threads.count) threads")
        let connections = Set(responses.compactMap { $0.headers["X-Connection"] })
        #expect(connections.count == 1, "nginx saw connections \(connections)")
    }

    /// The limit bounds the whole client, whatever the number of loops: 12
    /// URLs over 6 hosts (spread over 3 loops), each answered after 50 ms,
    /// take at least 12 / limit rounds of 50 ms (a limit per loop would let
    /// up to 3 times as many run at once), and no host runs more than the limit.
    @Test(arguments: [1, 2, 3])
    func theTransferLimitBoundsAllLoopsTogether(limit: Int) async throws {
        let servers = try (0..<6).map { _ in try ScriptedServer() }
        for server in servers { server.route("/slow.png", ScriptedResponse.ok(Self.large).delayed(0.05)) }
        var configuration = FetchConfiguration()
        configuration.transferLoops = 3
        configuration.maxConcurrentTransfers = limit
        let client = FetchClient(configuration: configuration)
        let started = Date()
        let (_, responses) = try await Self.fetchInRounds(client, rounds: 1, width: 12) { _, index in
            servers[index % servers.count].url("/slow.png?n=\(index)")
        }
        let seconds = Date().timeIntervalSince(started)
        #expect(responses.count == 12)
        #expect(seconds >= Double(12 / limit) * 0.05 * 0.9, "12 URLs in \(seconds) s with \(limit) at a time")
        #expect(servers.allSatisfy { $0.maxConcurrentRequests <= limit })
    }
}
