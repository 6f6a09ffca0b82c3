import Support

/// The completion workers of one `FetchClient` (issue 22): threads that take
/// a finished transfer's file work off the transfer loops.
///
/// A host stays on one transfer loop (SPEC §6), so one busy host keeps one
/// loop thread busy; what that thread did after each transfer (hand the
/// body to the sink: a temporary file, its digest and structure check; then
/// the caller's completion: validate, commit, report, start the next
/// loads) now runs here, and the loop goes straight back to libcurl.
///
/// `FetchConfiguration.completionWorkers` threads (one per core by
/// default), all started on the first job (a run of cache hits starts
/// none); `TransferLoops` owns them, beside the loops. A large body that
/// `start` streams goes to one worker chunk by chunk (`StreamHandoff`). A
/// transfer loop hands the finished transfers of one round (one pass of its
/// loop) to one worker in one batch (`CurlLoop.handOff`). Each batch (and
/// each stream) goes to the worker with the fewest jobs pending, so a
/// completion that blocks (a slow disk) holds only the jobs queued behind it
/// on its own worker, and only while every other worker is busy too.
/// When no thread can be started, a job runs on the calling thread, as it
/// did before the workers.
///
/// Threading: any thread may call `run`; `shutdown` is for the client's end.
final class CompletionWorkers: Sendable {
    private struct State {
        var workers: [CompletionWorker] = []
        var started = false
        var stopping = false
    }

    private let state = Locked(State())
    let count: Int

    init(count: Int) {
        self.count = min(Defaults.maxCompletionWorkers, max(1, count))
    }

    /// Runs `jobs`, in order, on the least busy worker, after the jobs
    /// queued there before them, with one wake-up at most (`CurlLoop.handOff`).
    func run(_ jobs: [@Sendable () -> Void]) {
        var jobs = jobs
        run(taking: &jobs)
    }

    /// `run`, taking the jobs over (`CompletionWorker.run(taking:)`): `jobs`
    /// is left empty, with room, and each job is freed where it ran.
    func run(taking jobs: inout [@Sendable () -> Void]) {
        guard leastBusy()?.run(taking: &jobs) != true else { return }
        for job in jobs { job() }
        jobs.removeAll(keepingCapacity: true)
    }

    /// The worker with the fewest jobs pending (all started on the first
    /// call); nil when none could be started or they are stopping.
    func leastBusy() -> CompletionWorker? {
        state.withLock { state -> CompletionWorker? in
            guard !state.stopping else { return nil }
            if !state.started {
                state.started = true
                for index in 0..<count {
                    // A worker that cannot start is left out; with none, jobs run where they are handed over.
                    guard let worker = try? CompletionWorker(name: "cache-worker-\(index)") else { break }
                    state.workers.append(worker)
                }
            }
            var best: CompletionWorker?
            var fewest = Int.max
            for worker in state.workers {
                let pending = worker.pending.load(ordering: .relaxed)
                if pending < fewest {
                    best = worker
                    fewest = pending
                    if pending == 0 { break }
                }
            }
            return best
        }
    }

    /// Jobs handed over and not yet finished, on all workers together (each
    /// holds what its job captured until it has run: the bound on memory).
    func totalPending() -> Int {
        state.withLock { state in
            state.workers.reduce(0) { $0 + $1.pending.load(ordering: .relaxed) }
        }
    }

    /// Lets every worker exit once it has run what it was given; later jobs
    /// run on the calling thread.
    func shutdown() {
        let workers = state.withLock { state -> [CompletionWorker] in
            state.stopping = true
            return state.workers
        }
        for worker in workers { worker.shutdown() }
    }
}
