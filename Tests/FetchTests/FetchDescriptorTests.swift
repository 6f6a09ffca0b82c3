@testable import Fetch
import Foundation
import Glibc
import Support
import Testing
import TestSupport

/// Every descriptor the engine opens is closed once it is done with it:
/// connections' sockets (kept alive, dropped, reset, refused, cancelled while
/// connecting or while a paused body waits for its worker), a PUT's body file,
/// the loops' epoll sets and wake-ups. A bounded stress of fetches cancelled
/// at any point and fetches that fail, then the clients and the server let
/// go: the process has the descriptors it had before.
@Suite(.timeLimit(.minutes(3))) struct FetchDescriptorTests {
    /// A sink that counts and keeps nothing; `slow` keeps a large body paused for its worker.
    final class CountingSink: BodySink, @unchecked Sendable {
        let slow: Bool
        init(slow: Bool) { self.slow = slow }
        func write(_ bytes: UnsafeRawBufferPointer) throws { if slow { usleep(1_000) } }
        func reset() throws {}
    }

    /// A port nothing listens on (a listener bound, then closed).
    static func refusedPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) == 0 && getsockname(fd, $0, &size) == 0 }
        }
        try #require(bound)
        return UInt16(bigEndian: address.sin_port)
    }

    /// One client's life against one server: `count` fetches of every kind, a
    /// third of them cancelled at a random point, each awaited to its one
    /// completion; then the client and the server go.
    static func round(_ number: Int, count: Int, temp: TempDirectory) async throws {
        let server = try ScriptedServer()
        let large = Array(repeating: UInt8(9), count: 12 * Defaults.bufferedBodyLimit)   // more chunks than buffers: paused
        server.route("/small", .ok(Array(repeating: 7, count: 300), contentType: "text/plain"))
        server.route("/large", .ok(large, contentType: "text/plain"))
        var cut = ScriptedResponse.ok(large, contentType: "text/plain")
        cut.closeAfterBodyBytes = 3 * Defaults.bufferedBodyLimit
        server.route("/cut", cut)
        var reset = ScriptedResponse()
        reset.resetWithoutAnswer = true
        server.route("/reset", reset)
        server.route("/missing", .status(404))
        var slow = ScriptedResponse.ok([1, 2, 3], contentType: "text/plain")
        slow.delayBeforeHeaders = 30   // only ever cancelled, or cut by the server's stop
        server.route("/slow", slow)
        server.route("/put", .status(201))
        let upload = try temp.write("upload-\(number)", Array(repeating: 5, count: 200_000))
        var info = stat()
        try #require(stat(upload, &info) == 0)
        let bodyFile = FetchRequest.BodyFile(path: upload, length: Int64(info.st_size), inode: UInt64(info.st_ino))
        let refused = "http://127.0.0.1:\(try refusedPort())/refused"

        var configuration = FetchConfiguration()
        configuration.retries = 1
        configuration.retryBaseDelay = 0
        configuration.transferLoops = 2
        configuration.completionWorkers = 2
        configuration.maxConcurrentTransfers = number % 2 == 0 ? nil : 8   // the slot queue, every other round
        var client: FetchClient? = FetchClient(configuration: configuration)
        weak let gone = client
        let calls = Locked([Int](repeating: 0, count: count))
        var handles: [FetchHandle] = []
        var sinks: [CountingSink] = []
        let kinds = ["/small", "/large", "/cut", "/reset", "/missing", "/slow", "/put", "refused"]
        for index in 0..<count {
            let kind = kinds[index % kinds.count]
            let request: FetchRequest
            switch kind {
            case "refused": request = FetchRequest(url: refused + "?\(index)")
            case "/put": request = FetchRequest(url: server.url("/put?\(index)"), method: .put, body: [1, 2, 3], bodyFile: bodyFile)
            default: request = FetchRequest(url: server.url("\(kind)?\(number)-\(index)"))
            }
            let sink = CountingSink(slow: kind == "/large")
            let handle = FetchHandle()
            if index % 11 == 3 { handle.cancel() }   // before the start
            client?.start(request, into: sink, handle: handle) { _ in calls.withLock { $0[index] += 1 } }
            if index % 11 == 5 { handle.cancel() }   // right after it
            handles.append(handle)
            sinks.append(sink)
        }
        // The rest of the cancels at random points: connecting, paused, completing. Every /slow is among them.
        try? await Task.sleep(nanoseconds: UInt64.random(in: 0..<30_000_000))
        for (index, handle) in handles.enumerated() where index % 3 == 0 || kinds[index % kinds.count] == "/slow" {
            handle.cancel()
        }
        let answered = await eventually(within: 60) { calls.withLock { $0.allSatisfy { $0 >= 1 } } }
        #expect(answered, "round \(number): \(calls.withLock { $0.filter { $0 == 0 }.count }) fetches never completed")
        #expect(calls.withLock { $0.allSatisfy { $0 <= 1 } }, "round \(number): a fetch completed twice")
        handles.removeAll()
        withExtendedLifetime(sinks) {}
        client = nil
        // A retry's task may hold the client a moment after its completion ran; its last holder's
        // release joins the loops' threads, which clean their multi handles (and sockets) up.
        let released = await eventually(within: 30) { gone == nil }
        #expect(released, "round \(number): the client was not let go")
        server.stop()
    }

    @Test func cancelsAndFailuresAtAnyPointLeaveNoDescriptorOpen() async throws {
        let temp = try TempDirectory(prefix: "asyncfetch-fds")
        try await Self.round(0, count: 8, temp: temp)   // what the process opens once (libcurl, OpenSSL) is open now
        let before = openDescriptors()
        for number in 1...4 { try await Self.round(number, count: 96, temp: temp) }
        let after = openDescriptors()
        // What the engine (and this test's server) opens: sockets, epoll sets, eventfds, the PUT's
        // files. Another suite's thread winding down may open or close something else meanwhile.
        let added = after.filter { fd, target in
            before[fd] != target && (target.hasPrefix("socket:") || target.hasPrefix("anon_inode:") || target.hasPrefix(temp.path))
        }.sorted { $0.key < $1.key }
        #expect(added.isEmpty, "\(added.count) descriptors left open: \(added.prefix(12).map { "\($0.key) \($0.value)" })")
    }
}
