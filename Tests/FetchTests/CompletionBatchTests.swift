@testable import Fetch
import Support
import Testing

/// `CompletionBatch.atEnd`: what a completion defers runs once every job of
/// its worker's batch has run, in the order deferred; on a thread that is
/// not a completion worker's it is refused (the caller does the work).
@Suite struct CompletionBatchTests {
    @Test func deferredWorkRunsAfterEveryJobOfTheBatchInOrder() async throws {
        let worker = try CompletionWorker(name: "cache-worker-test")
        defer { worker.shutdown() }
        let seen = Locked<[String]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let jobs: [@Sendable () -> Void] = [
                {
                    seen.withLock { $0.append("job 1") }
                    let kept = CompletionBatch.atEnd { seen.withLock { $0.append("end of job 1") } }
                    seen.withLock { $0.append("kept: \(kept)") }
                },
                {
                    seen.withLock { $0.append("job 2") }
                    _ = CompletionBatch.atEnd {
                        seen.withLock { $0.append("end of job 2") }
                        done.resume()
                    }
                },
            ]
            #expect(worker.run(contentsOf: jobs))
        }
        #expect(seen.withLock { $0 } == ["job 1", "kept: true", "job 2", "end of job 1", "end of job 2"])
    }

    @Test func anotherThreadIsRefused() {
        #expect(!CompletionBatch.atEnd {})
    }
}
