import DiskCache
import Fetch
import Support
import Synchronization
import Testing
@testable import Loader

/// A URL pushed back (429) gives its slot back and queues itself at the front
/// of its paused host (`HostAttemptGate.failed`, `HostDispatch.requeue`) while
/// Ctrl-C cancels the batch (`HostDispatch.cancel`) and the URL's task. Whatever
/// the order, the cancelled batch must end: no slot still held, nothing left
/// queued (its `nextStarts` then returns nothing; else it waits for good, and an
/// interrupted run hangs until its grace ends).
///
/// Before, `requeue` read `cancelled` in one lock section and queued the URL in
/// another: a `cancel` in between drained the queues first, and the URL was then
/// queued at a paused host no timer would ever wake. (The gate's slot flag
/// moved in a lock section of its own too; no round was seen to leave a slot
/// held, and `leftRunning` guards it.)
@Suite(.timeLimit(.minutes(5))) struct PushbackCancelRaceTests {
    /// Both sides start together (a spin on an atomic); the canceller waits for
    /// the pause the 429 makes, then a random number of spins (up to some tens
    /// of microseconds), so the rounds sweep its `cancel` across the gate's
    /// giving its slot back. Bounded: a fixed number of rounds, each ending once
    /// the URL's task has its verdict (always: it is cancelled). On the old code
    /// about one round in 3,000 ended with the URL queued (and 131 of 500 with
    /// 20 µs slept between `requeue`'s two lock sections); never since.
    @Test func aCancelledBatchEndsWhateverTheOrderOfPushbackAndCancel() async throws {
        let host = HostKey(origin: "http://127.0.0.1:9", name: "127.0.0.1")
        let url = "http://127.0.0.1:9/a.png"
        let key = try CacheKey(url: url)
        var leftRunning = 0, leftQueued = 0
        for _ in 0..<Self.rounds {
            // A pause no loaded machine outlasts: the canceller, however late it runs, finds the host paused.
            var policy = HostPolicy(jobs: 1, jobsPerHost: 1)
            policy.pauseBase = 600
            policy.pauseMax = 600
            let dispatch = HostDispatch(policy: policy, queueLimit: 8, onNote: nil,
                                        onGaveUp: { _, _ in }, onFail: { _, _ in }, onStarted: { _ in }, onCancelled: { _ in })
            dispatch.enqueue([HostLoad(host: host, url: url, key: key, entry: nil, shown: url, lookup: 0, refresh: false)])
            dispatch.readerFinished()
            #expect(await dispatch.nextStarts().count == 1)
            let gate = HostAttemptGate(host: host, dispatch: dispatch, retries: 3)
            let start = StartLine()
            let ended = Atomic<Bool>(false)
            let urlTask = Task.detached {
                start.arrive()
                _ = await gate.failed(FetchError(.http, url: url, status: 429))
                dispatch.finished(gate: gate)   // the URL's end, as a batch's load ends
                ended.store(true, ordering: .releasing)
            }
            let spins = Int.random(in: 0..<Self.maxSpins)
            try startDetachedThread(name: "canceller") {
                start.arrive()
                // The pause its 429 made: the gate is about to give its slot back and queue itself.
                // (Or the URL's end, should the pause ever be missed: the thread never outlives its round.)
                while dispatch.activity.paused == 0 && !ended.load(ordering: .acquiring) {}
                start.spin(spins)
                dispatch.cancel()
                urlTask.cancel()
            }
            await urlTask.value
            if dispatch.running != 0 { leftRunning += 1 }
            if dispatch.hasQueued(host) { leftQueued += 1 }
        }
        #expect(leftRunning == 0, "rounds that ended with the URL's slot still held")
        #expect(leftQueued == 0, "rounds that ended with the URL queued in a cancelled batch")
    }

    static let rounds = 1000
    static let maxSpins = 30000

    /// Two sides that start at once: each arrives, then waits for the other.
    final class StartLine: Sendable {
        private let arrived = Atomic<Int>(0)
        private let sink = Atomic<Int>(0)

        func arrive() {
            arrived.add(1, ordering: .acquiringAndReleasing)
            while arrived.load(ordering: .acquiring) < 2 {}
        }

        /// Busy work the optimiser keeps.
        func spin(_ count: Int) {
            for index in 0..<count { sink.store(index, ordering: .relaxed) }
        }
    }
}
