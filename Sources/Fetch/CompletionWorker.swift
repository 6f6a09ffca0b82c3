import Support
import Synchronization

/// One thread, "cache-worker-N", that runs in order the work transfer loops
/// hand it: a finished transfer's completion (the body handed to its sink,
/// then the caller's completion, which for a cache load validates, commits
/// and reports). One of a client's `CompletionWorkers`.
///
/// Feeding: `run` appends to a queue under the lock and wakes the thread
/// only if it sleeps; the thread takes the whole queue at once (a swap) and
/// runs it. A transfer loop hands over a whole round of finished transfers
/// at once (`run(contentsOf:)`), so it costs one uncontended lock and at
/// most one wake-up per round, not per transfer. No Swift task and no
/// thread per job.
///
/// Lifetime: the thread holds the worker until it exits, which it does
/// after `shutdown()`, once every job queued before has run (each
/// completion runs exactly once, whoever lets go of the client first).
final class CompletionWorker: Sendable {
    private struct Shared {
        var queue: [@Sendable () -> Void] = []
        /// The thread sleeps (or is about to) on `wake` (only then does `run` post it).
        var sleeping = false
        var stopping = false
    }

    private let shared = Locked(Shared())
    private let wake = WakeSemaphore()
    /// Jobs handed over and not yet finished (queued or running): what
    /// `CompletionWorkers` compares to choose the least busy worker.
    let pending = Atomic<Int>(0)

    /// Starts the thread, named `name`.
    init(name: String) throws(ThreadStartError) {
        try startDetachedThread(name: name) { [self] in work() }
    }

    /// Queues `job`; it runs on this worker's thread after every job queued
    /// before it. False (and not queued) once `shutdown` was called.
    func run(_ job: @escaping @Sendable () -> Void) -> Bool {
        enqueue(1) { $0.append(job) }
    }

    /// Queues `jobs`, to run in order as `run` runs one, with one wake-up at
    /// most: a transfer loop's round of finished transfers (`CurlLoop.handOff`).
    /// Takes them over (`jobs` is left empty, with room; untouched when
    /// refused): this worker then holds the only reference to each job, so
    /// what a job captured is freed here after it ran, never by the caller's
    /// thread letting go of its copy afterwards (which a shared copy left to
    /// the timing: up to 2.5 k instructions per 304 on the loop).
    func run(taking jobs: inout [@Sendable () -> Void]) -> Bool {
        enqueue(jobs.count) { queue in
            if queue.isEmpty {
                swap(&queue, &jobs)   // the caller gets the empty queue's room back: no allocation
            } else {
                queue.append(contentsOf: jobs)
                jobs.removeAll(keepingCapacity: true)   // under the lock: the queue still holds each job
            }
        }
    }

    /// Appends `count` jobs (`append` adds them to the queue, under the lock)
    /// and wakes the thread if it sleeps.
    private func enqueue(_ count: Int, _ append: (inout [@Sendable () -> Void]) -> Void) -> Bool {
        pending.add(count, ordering: .relaxed)
        let (accepted, wakes) = shared.withLock { shared -> (Bool, Bool) in
            guard !shared.stopping else { return (false, false) }
            append(&shared.queue)
            defer { shared.sleeping = false }
            return (true, shared.sleeping)
        }
        // Posted after the lock is given back: under it, the woken thread
        // would block at once on the lock still held (a futex wait and a wake
        // more per job). Nothing is missed: it set `sleeping` under the lock
        // before it went to wait, and one post matches each such note.
        if wakes { wake.post() }
        if !accepted { pending.subtract(count, ordering: .relaxed) }
        return accepted
    }

    /// Lets the thread exit once its queue is empty.
    func shutdown() {
        let wakes = shared.withLock { shared -> Bool in
            shared.stopping = true
            defer { shared.sleeping = false }
            return shared.sleeping
        }
        if wakes { wake.post() }
    }

    /// Takes a run job's place in the batch (captures nothing).
    private static let ran: @Sendable () -> Void = {}

    private func work() {
        var jobs: [@Sendable () -> Void] = []   // swapped with `queue`: no copy per round
        while true {
            // nil: nothing to do; the thread noted that it sleeps, and does.
            let stop = shared.withLock { shared -> Bool? in
                if shared.queue.isEmpty && !shared.stopping {
                    shared.sleeping = true
                    return nil
                }
                swap(&shared.queue, &jobs)
                return jobs.isEmpty && shared.stopping
            }
            guard let stop else {
                wake.wait()
                continue
            }
            if stop { return }
            for index in jobs.indices {
                jobs[index]()
                // What the job captured goes now, not with the whole batch:
                // `pending` counts what the queue still holds (the bound of
                // `Defaults.completionBacklogLimit`).
                jobs[index] = Self.ran
                pending.subtract(1, ordering: .relaxed)
            }
            jobs.removeAll(keepingCapacity: true)
        }
    }
}
