import DiskCache
import Fetch
import Foundation
import Loader
import Support
import Testing
import TestSupport

/// A batch's loads complete on the fetch client's completion workers, not on
/// the transfer loops: cancels that arrive at any point (before a transfer,
/// during it, while its completion waits for a worker, while it runs) must
/// still give every URL one terminal report after its `loading`, leave no
/// temporary file, and end the batch promptly; the `--jobs` bound holds.
@Suite(.timeLimit(.minutes(3))) struct BatchCompletionStressTests {
    let temp: TempDirectory
    let store: DiskCacheStore

    init() throws {
        temp = try TempDirectory(prefix: "asyncfetch-stress")
        store = try DiskCacheStore(directory: temp.file("cache"))
    }

    /// Small bodies (held in memory, handed to the sink on a worker), bodies
    /// past `Defaults.bufferedBodyLimit` (streamed from the loop), some slow.
    static func server() throws -> ScriptedServer {
        let server = try ScriptedServer()
        let small = Array(repeating: UInt8(ascii: "s"), count: 300)
        let large = Array(repeating: UInt8(ascii: "L"), count: 3 * Defaults.bufferedBodyLimit)
        server.route("/img", handler: { request in
            let number = Int(request.path.split(separator: "?").last ?? "") ?? 0
            let body = number % 5 == 0 ? large : small
            let response = ScriptedResponse.ok(body, contentType: "text/plain")
            return number % 7 == 0 ? response.delayed(0.02) : response
        })
        return server
    }

    func loader(jobs: Int, perHost: Int) -> ImageLoader {
        ImageLoader(cache: store, options: LoaderHarness.options { options in
            options.jobs = jobs
            options.jobsPerHost = perHost
            options.acceptAnyContent = true
            options.refresh = true   // every round goes to the network
        })
    }

    var temporaryFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: temp.file("cache/.tmp"))) ?? []
    }

    @Test func cancellingAtRandomPointsGivesEveryURLOneReportAfterItsLoading() async throws {
        let server = try Self.server()
        let count = 60
        var generator = SystemRandomNumberGenerator()
        var problems: [String] = []
        var slowest = 0.0
        for round in 0..<40 {
            let urls = (0..<count).map { server.url("/img?\(round * 1000 + $0)") }
            let batch = loader(jobs: 8, perHost: 6).batch(ArraySequence(urls))
            let cancelAfter = Int.random(in: 0..<(2 * count), using: &generator)
            let delay = UInt64.random(in: 0..<20_000_000, using: &generator)
            let canceller = Task {
                if round % 2 == 0 {
                    try? await Task.sleep(nanoseconds: delay)
                    batch.cancel()
                }
            }
            var loading: Set<String> = []
            var terminal: [String: Int] = [:]
            var seen = 0
            var cancelledAt: Double?
            for await event in batch {
                seen += 1
                if round % 2 == 1 && seen == cancelAfter {
                    cancelledAt = monotonicSeconds()
                    batch.cancel()
                }
                if case .loading = event.phase {
                    if terminal[event.url] != nil { problems.append("round \(round): loading after the end of \(event.url)") }
                    loading.insert(event.url)
                    continue
                }
                terminal[event.url, default: 0] += 1
                if case .success = event.phase, !loading.contains(event.url) {
                    problems.append("round \(round): success without loading for \(event.url)")
                }
            }
            await canceller.value
            await batch.finished()
            if let cancelledAt { slowest = max(slowest, monotonicSeconds() - cancelledAt) }
            if terminal.count != count || !terminal.values.allSatisfy({ $0 == 1 }) {
                problems.append("round \(round): \(terminal.count) URLs reported, repeated: \(terminal.filter { $0.value != 1 })")
            }
            let left = temporaryFiles
            if !left.isEmpty { problems.append("round \(round): temporary files left: \(left)") }
        }
        #expect(problems.isEmpty, "\(problems.prefix(10))")
        // A hang, not a latency (SPEC §6's "promptly" is checked per transfer in FetchClientTests): 40 rounds on a busy pool.
        #expect(slowest < 5, "a cancelled batch took \(slowest) s to end")
    }

    /// The global bound: one host, more slots per host than `--jobs`, many
    /// small bodies whose completions queue on the workers.
    @Test func moreTransfersThanJobsNeverRunAtOnce() async throws {
        let server = try ScriptedServer()
        server.route("/img", handler: { _ in ScriptedResponse.ok(Array(repeating: 1, count: 200), contentType: "text/plain").delayed(0.005) })
        for round in 0..<5 {
            server.resetStatistics()
            let urls = (0..<300).map { server.url("/img?\(round * 1000 + $0)") }
            var ends = 0
            for await event in loader(jobs: 3, perHost: 6).batch(ArraySequence(urls)) {
                if case .loading = event.phase { continue }
                ends += 1
            }
            #expect(ends == 300)
            #expect(server.maxConcurrentRequests <= 3, "requests at once: \(server.maxConcurrentRequests)")
        }
    }
}
