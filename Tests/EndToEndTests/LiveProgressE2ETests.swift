import Foundation
import Testing
import TestSupport

/// The progress bar counts bytes as they arrive, across every transfer in
/// flight, and one large URL gets a bar too (issue 16, item 3). In a real
/// pseudo-terminal.
@Suite struct LiveProgressE2ETests {
    let server: ScriptedServer
    let cli: CLI

    init() throws {
        server = try ScriptedServer()
        cli = try CLI()
        var big = ScriptedResponse(status: 200, headers: [("Content-Type", "application/octet-stream")])
        big.generatedBodyLength = 2 * 1024 * 1024
        // 2 MiB in about 2 s: 64 KiB every 60 ms.
        server.route("/big.bin", big.trickled(chunk: 64 * 1024, interval: 0.06))
        server.route("/big2.bin", big.trickled(chunk: 64 * 1024, interval: 0.06))
    }

    /// The bars drawn, as the terminal got them.
    func bars(_ raw: String) -> [String] {
        raw.components(separatedBy: "\r\u{1B}[K").dropFirst().map { $0.components(separatedBy: "\r").first ?? $0 }
            .filter { $0.contains(" URLs") }
    }

    @Test func oneLargeURLGetsABarWithBytesRateAndETA() async throws {
        let result = try await cli.runInTerminal(["--any", server.url("/big.bin")])
        #expect(result.status == 0, "\(result.stdout)")
        let drawn = bars(result.stdout)
        #expect(!drawn.isEmpty, "a bar for one URL: \(result.stdout.debugDescription)")
        let partial = drawn.filter { $0.contains("0/1 URLs") && $0.contains(" of 2.0 MiB") }
        #expect(!partial.isEmpty, "bytes of the known total while the body arrives: \(drawn)")
        #expect(partial.contains { $0.contains("ETA ") && $0.contains("/s") }, "\(partial)")
        #expect(partial.contains { $0.contains("KiB of") || ($0.contains("MiB of") && !$0.hasPrefix("2.0 MiB of")) },
                "a bar before the end of the body: \(partial)")
    }

    @Test func bytesCountWhileTwoBodiesAreStillArriving() async throws {
        let result = try await cli.runInTerminal(["--any", server.url("/big.bin"), server.url("/big2.bin")])
        #expect(result.status == 0, "\(result.stdout)")
        let early = bars(result.stdout).filter { $0.contains("0/2 URLs") }
        #expect(early.contains { !$0.contains("  0 B  ") && $0.contains(" of 4.0 MiB") }, "bytes move before any URL is done: \(early)")
    }
}
