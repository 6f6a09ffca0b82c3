import Fetch
import Foundation
import Support
import Testing
import TestSupport

/// SIGPIPE and a process that hosts the library: a peer that goes away
/// mid-write must be an error, not the end of the process, and the
/// process-wide disposition stays as the host set it (an ignored SIGPIPE
/// would be inherited by every child the host starts). libcurl 7.88 with
/// `CURLOPT_NOSIGNAL` leaves the disposition alone; each transfer loop
/// blocks SIGPIPE in its own thread's mask (`CurlLoop`).
@Suite(.timeLimit(.minutes(3))) struct FetchSIGPIPETests {
    /// SIGPIPE's bit in `SigIgn` and in `SigCgt` of this process: whether it is ignored, and whether
    /// it has a handler. Only SIGPIPE's: another test may change another signal's meanwhile (HelperTests).
    static func sigpipeDisposition() throws -> (ignored: Bool, caught: Bool) {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        func bit(_ field: String) throws -> Bool {
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field) }, "no \(field) in /proc/self/status")
            let mask = try #require(UInt64(line.dropFirst(field.count).trimmingCharacters(in: .whitespaces), radix: 16))
            return mask & (UInt64(1) << UInt64(SIGPIPE - 1)) != 0
        }
        return (try bit("SigIgn:"), try bit("SigCgt:"))
    }

    /// Whether each transfer loop thread (`curl-loop-N`) of this process blocks SIGPIPE, by thread id.
    static func loopThreadsBlockingSIGPIPE() throws -> [String: Bool] {
        var found: [String: Bool] = [:]
        for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") {
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  comm.hasPrefix("curl-loop-"),
                  let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
                  let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
            else { continue }   // a thread that ended meanwhile
            found[task] = mask & (UInt64(1) << UInt64(SIGPIPE - 1)) != 0
        }
        return found
    }

    @Test func aFetchLeavesTheProcessWideDispositionAloneAndItsLoopBlocksSIGPIPE() async throws {
        let before = try Self.sigpipeDisposition()
        let server = try ScriptedServer()
        server.route("/a.png", .ok([1, 2, 3]))
        let temp = try TempDirectory()
        let client = FetchClient()
        let sink = try FileSink(path: temp.file("a"))
        let response = try await client.fetch(FetchRequest(url: server.url("/a.png")), into: sink)
        try sink.close()
        #expect(response.status == 200)
        // The client's loops live as long as the client: keep it until they have been looked at.
        let loops = try withExtendedLifetime(client) { try Self.loopThreadsBlockingSIGPIPE() }
        #expect(!loops.isEmpty, "no curl-loop thread found")
        #expect(loops.values.allSatisfy { $0 }, "loop threads that do not block SIGPIPE: \(loops.filter { !$0.value }.keys)")
        let after = try Self.sigpipeDisposition()
        #expect(after.ignored == before.ignored && after.caught == before.caught, "before \(before), after \(after)")
        // Also whatever an earlier test's fetches did, as the library is set up once per process
        // (no test here ignores SIGPIPE: they block it on a thread of their own).
        #expect(!before.ignored, "SIGPIPE is ignored process-wide")
    }
}
