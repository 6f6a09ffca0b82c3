import Support

/// A batch's side of the `HostScheduler`: it holds the scheduler (in
/// `Locked`), feeds it the time, and carries out its actions. Loads to start
/// go to the batch's main loop (`nextStart`), which owns the task group;
/// loads that fail at once and URLs pushed back by their host go to the
/// handlers and gates. A timer wakes the scheduler when a pause ends.
///
/// Cancellation: `cancel()` drains every queued URL (each gets its
/// terminal report, paused hosts included) and turns later starts into
/// cancelled reports; `nextStart` returns nil once nothing runs any more.
final class HostDispatch: Sendable {
    /// One URL of the batch waiting for, or holding, a slot of its host.
    enum Ticket: Sendable {
        /// Not started yet.
        case load(HostLoad)
        /// Pushed back by a 429 or 503: its fetch waits in its gate to try again.
        case resume(HostAttemptGate)
    }

    typealias Scheduler = HostScheduler<Ticket>

    private struct State {
        var scheduler: Scheduler
        var ready: [HostLoad] = []
        var consumer: CheckedContinuation<HostLoad?, Never>?
        var reader: CheckedContinuation<Void, Never>?
        var readerDone = false
        var cancelled = false
        var timer: Task<Void, Never>?
        var timerDue: Double?
    }

    private let state: Locked<State>
    /// Queued URLs the reader may hand over before it waits (memory stays flat).
    private let queueLimit: Int
    private let onFail: @Sendable (HostLoad, HostFailure) -> Void
    private let onCancelled: @Sendable (HostLoad) -> Void
    private let onStarted: @Sendable (HostLoad) -> Void
    private let onNote: (@Sendable (HostNote) -> Void)?

    init(policy: HostPolicy, queueLimit: Int, onNote: (@Sendable (HostNote) -> Void)?,
         onFail: @escaping @Sendable (HostLoad, HostFailure) -> Void,
         onStarted: @escaping @Sendable (HostLoad) -> Void,
         onCancelled: @escaping @Sendable (HostLoad) -> Void) {
        state = Locked(State(scheduler: Scheduler(policy: policy)))
        self.queueLimit = max(1, queueLimit)
        self.onFail = onFail
        self.onCancelled = onCancelled
        self.onStarted = onStarted
        self.onNote = onNote
    }

    // MARK: The reader's side

    /// Hands a URL to its host's queue (or reports it cancelled, after `cancel`).
    func enqueue(_ load: HostLoad) {
        let cancelled = state.withLock { $0.cancelled }
        if cancelled { return onCancelled(load) }
        step { $0.scheduler.enqueue(.load(load), host: load.host, now: $1) }
    }

    /// Returns once fewer than `queueLimit` URLs are queued.
    func waitForQueueRoom() async {
        while true {
            let room = state.withLock { $0.scheduler.queued < queueLimit || $0.cancelled }
            if room { return }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.scheduler.queued < queueLimit || state.cancelled { return true }
                    state.reader = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }

    /// No more URLs will come.
    func readerFinished() {
        step { state, _ in
            state.readerDone = true
            return []
        }
    }

    // MARK: The main loop's side

    /// The next load to run, in the order the scheduler starts them; nil when
    /// the reader is done and nothing is queued, paused or running.
    func nextStart() async -> HostLoad? {
        await withCheckedContinuation { (continuation: CheckedContinuation<HostLoad?, Never>) in
            let answer = state.withLock { state -> HostLoad?? in
                if !state.ready.isEmpty { return .some(state.ready.removeFirst()) }
                if Self.isDone(state) { return .some(nil) }
                state.consumer = continuation
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// A load's task ends; it gives its slot back unless its gate had given it up.
    func finished(_ load: HostLoad, gate: HostAttemptGate) {
        guard gate.holdsSlot else { return }
        step { $0.scheduler.finished(host: load.host, now: $1) }
    }

    /// Ctrl-C: every queued URL is reported (loads) or released (pushed-back
    /// fetches, which then fail as cancelled); later starts are reported too.
    func cancel() {
        let (drained, timer) = state.withLock { state -> ([Ticket], Task<Void, Never>?) in
            state.cancelled = true
            defer { state.timer = nil }
            return (state.scheduler.drain(), state.timer)
        }
        timer?.cancel()
        for ticket in drained {
            switch ticket {
            case .load(let load): onCancelled(load)
            case .resume(let gate): _ = gate.resume(.cancelled)
            }
        }
        step { _, _ in [] }
    }

    // MARK: The gates' side

    func report(_ outcome: Scheduler.Outcome, host: HostKey) {
        step { $0.scheduler.report(outcome, host: host, now: $1) }
    }

    /// Gives the gate's slot back and queues it at the front of its host, to
    /// be resumed when the host takes work again (false: cancelled meanwhile).
    func requeue(_ gate: HostAttemptGate) -> Bool {
        let cancelled = state.withLock { $0.cancelled }
        if cancelled { return false }
        step { $0.scheduler.finished(host: gate.host, requeue: .resume(gate), now: $1) }
        return true
    }

    func failure(of host: HostKey) -> HostFailure? { state.withLock { $0.scheduler.failure(of: host) } }

    // MARK: Reporting

    var counts: HostCounts { state.withLock { $0.scheduler.counts } }

    /// Hosts with a transfer running, and hosts paused now.
    var activity: (active: Int, paused: Int) { state.withLock { $0.scheduler.activity(now: monotonicSeconds()) } }

    // MARK: Inside

    private static func isDone(_ state: State) -> Bool {
        state.readerDone && state.ready.isEmpty && state.scheduler.running == 0 && state.scheduler.queued == 0
    }

    /// Runs one scheduler call under the lock, then carries out its actions
    /// outside it (a start that is a pushed-back fetch whose task was
    /// cancelled gives its slot straight back, which may start others).
    private func step(_ body: (inout State, Double) -> [Scheduler.Action]) {
        var pending = state.withLock { state in body(&state, monotonicSeconds()) }
        while !pending.isEmpty {
            var released: [HostKey] = []
            for action in pending {
                switch action {
                case .start(.load(var load), _, let waited):
                    load.waited = waited
                    if state.withLock({ $0.cancelled }) {
                        onCancelled(load)
                        released.append(load.host)
                    } else {
                        // Reported started before its task can end it: its `loading` comes first.
                        onStarted(load)
                        state.withLock { $0.ready.append(load) }
                    }
                case .start(.resume(let gate), let host, _):
                    if !gate.resume(.tryAgain) { released.append(host) }
                case .fail(.load(let load), _, let failure):
                    onFail(load, failure)
                case .fail(.resume(let gate), _, _):
                    _ = gate.resume(.stop)
                case .note(let note):
                    onNote?(note)
                }
            }
            pending = released.isEmpty ? [] : state.withLock { state in
                let now = monotonicSeconds()
                return released.flatMap { state.scheduler.finished(host: $0, now: now) }
            }
        }
        wakeWaiters()
    }

    /// Wakes the main loop (a load is ready, or all is done), the reader
    /// (room in the queues), and arms the timer for the next pause end.
    private func wakeWaiters() {
        let (consumer, answer, reader, timerDue) = state.withLock { state
            -> (CheckedContinuation<HostLoad?, Never>?, HostLoad?, CheckedContinuation<Void, Never>?, Double?) in
            var consumer: CheckedContinuation<HostLoad?, Never>?
            var answer: HostLoad?
            if state.consumer != nil, !state.ready.isEmpty || Self.isDone(state) {
                consumer = state.consumer
                state.consumer = nil
                answer = state.ready.isEmpty ? nil : state.ready.removeFirst()
            }
            var reader: CheckedContinuation<Void, Never>?
            if state.reader != nil, state.scheduler.queued < queueLimit || state.cancelled {
                reader = state.reader
                state.reader = nil
            }
            var arm: Double?
            if !state.cancelled, let wake = state.scheduler.nextWake, wake > monotonicSeconds(),
               state.timerDue.map({ wake < $0 }) ?? true {
                state.timerDue = wake
                state.timer?.cancel()
                arm = wake
            }
            return (consumer, answer, reader, arm)
        }
        consumer?.resume(returning: answer)
        reader?.resume()
        if let timerDue { arm(at: timerDue) }
    }

    private func arm(at due: Double) {
        let timer = Task { [weak self] in
            let delay = max(0, due - monotonicSeconds())
            do { try await Task.sleep(nanoseconds: UInt64(delay * 1e9) + 1_000_000) } catch { return }
            self?.fire(due)
        }
        state.withLock { state in
            if state.timerDue == due && !state.cancelled { state.timer = timer } else { timer.cancel() }
        }
    }

    private func fire(_ due: Double) {
        state.withLock { state in
            if state.timerDue == due {
                state.timerDue = nil
                state.timer = nil
            }
        }
        step { $0.scheduler.tick(now: $1) }
    }
}
