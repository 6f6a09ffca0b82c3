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
@Suite struct FetchSIGPIPETests {
    /// `SigIgn` and `SigCgt` of this process: which signals are ignored and which have a handler.
    static func dispositions() throws -> [Substring] {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        return status.split(separator: "\n").filter { $0.hasPrefix("SigIgn:") || $0.hasPrefix("SigCgt:") }
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
        let before = try Self.dispositions()
        try #require(before.count == 2, "\(before)")
        let server = try ScriptedServer()
        server.route("/a.png", .ok([1, 2, 3]))
        let temp = try TempDirectory()
        let client = FetchClient()
        let sink = try FileSink(path: temp.file("a"))
        let response = try await client.fetch(FetchRequest(url: server.url("/a.png")), into: sink)
        try sink.close()
        #expect(response.status == 200)
        let loops = try Self.loopThreadsBlockingSIGPIPE()
        #expect(!loops.isEmpty, "no curl-loop thread found")
        #expect(loops.values.allSatisfy { $0 }, "loop threads that do not block SIGPIPE: \(loops.filter { !$0.value }.keys)")
        #expect(try Self.dispositions() == before)
        // Also whatever an earlier test's fetches did, as the library is set up once per process
        // (no test here ignores SIGPIPE: they block it on a thread of their own).
        let ignored = try #require(before.first { $0.hasPrefix("SigIgn:") }.flatMap {
            UInt64($0.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        })
        #expect(ignored & (UInt64(1) << UInt64(SIGPIPE - 1)) == 0, "SIGPIPE is ignored process-wide")
    }
}
