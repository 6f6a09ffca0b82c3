import Fetch
import Foundation
import Support
import TestSupport

/// Runs fetches into files of one temporary directory and reports what a
/// caller sees: the response, or the `FetchError`, plus how long it took.
struct FetchHarness {
    let client: FetchClient
    let temp: TempDirectory

    init(_ configure: (inout FetchConfiguration) -> Void = { _ in }) throws {
        var configuration = FetchConfiguration()
        configure(&configuration)
        client = FetchClient(configuration: configuration)
        temp = try TempDirectory(prefix: "asyncfetch-fetch")
    }

    struct Outcome {
        let response: FetchResponse?
        let error: FetchError?
        let body: [UInt8]
        /// Bytes the engine handed to the sink (for a failure: before it stopped).
        let bytesWritten: Int64
        let seconds: Double
    }

    /// Fetches `url` into a fresh file; the file is removed afterwards, as an
    /// owner does after a failure, so `leftoverFiles` must be empty.
    func fetch(_ url: String, headers: HTTPHeaders = HTTPHeaders(), name: String = UUID().uuidString) async throws -> Outcome {
        let path = temp.file(name)
        let sink = try FileSink(path: path)
        let start = monotonicSeconds()
        defer { sink.remove() }
        do {
            let response = try await client.fetch(FetchRequest(url: url, headers: headers), into: sink)
            let seconds = monotonicSeconds() - start
            try sink.close()
            let body = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            return Outcome(response: response, error: nil, body: body, bytesWritten: sink.bytesWritten, seconds: seconds)
        } catch let error as FetchError {
            return Outcome(response: nil, error: error, body: [], bytesWritten: sink.bytesWritten, seconds: monotonicSeconds() - start)
        }
    }

    var leftoverFiles: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: temp.path)) ?? []
    }
}

/// Polls `condition` every 10 ms until it holds or `seconds` pass. Sleeps with
/// `Task.sleep`: a blocking wait would hold one of the few cooperative threads
/// (two on a 2-core machine) that the fetches under test need.
func eventually(within seconds: Double, _ condition: () -> Bool) async -> Bool {
    let deadline = monotonicSeconds() + seconds
    while !condition() {
        if monotonicSeconds() > deadline { return false }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return true
}
