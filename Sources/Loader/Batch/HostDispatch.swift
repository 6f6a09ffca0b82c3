import enum Fetch.Defaults
import RemoteCache
import Support
import Synchronization

/// A batch's side of the `HostScheduler`: it holds the scheduler (in
/// `Locked`), feeds it the time, and carries out its actions. Loads to start
/// go to the batch's main loop (`nextStarts`, every load ready at once);
/// loads that fail at once and URLs pushed back by their host go to the
/// handlers and gates. A timer wakes the scheduler when a pause ends.
///
/// Cancellation: `cancel()` drains every queued URL (each gets its
/// terminal report, paused hosts included) and turns later starts into
/// cancelled reports; `nextStarts` returns nothing once nothing runs any more.
///
/// Cost: one scheduler event (a start, a failed attempt, a finished load
/// with its answer) takes the lock once, twice when it starts loads (they are reported started between
/// the two), whatever the number of loads it starts.
final class HostDispatch: UploadSlots, Sendable {
    /// One URL of the batch waiting for, or holding, a slot of its host.
    enum Ticket: Sendable {
        /// Not started yet. Inline: a `HostLoad` is a pointer to its fixed
        /// part and its start's few fields (24 bytes), so a host's queue, and
        /// the slots it keeps beyond its URLs, hold no more than that per URL.
        case load(HostLoad)
        /// Pushed back by a 429 or 503: its fetch waits in its gate to try again.
        case resume(HostAttemptGate)
        /// An upload to the remote tier waiting for a slot of no host
        /// (`run(_:)`): `true` when lent one, `false` when the batch was cancelled.
        case upload(ParkedContinuation<Bool>)
    }

    typealias Scheduler = HostScheduler<Ticket>

    private struct State {
        var scheduler: Scheduler
        var ready: [HostLoad] = []
        var consumer: ParkedContinuation<[HostLoad]>?
        var reader: ParkedContinuation<Void>?
        var readerDone = false
        var cancelled = false
        /// Queued loads that carry a stored entry (revalidations): each counts
        /// `Defaults.batchStoredEntryWeight` times against the queue limit.
        var queuedWithEntry = 0
        var timer: Task<Void, Never>?
        var timerDue: Double?
        /// The scheduler's actions of the step under way (`step`): one array for every
        /// step, emptied by each (its storage kept), where each URL's end made one and freed it.
        var actions: [Scheduler.Action] = []

        /// Whether the batch is over: the reader is done and nothing is ready, running or queued.
        /// (A method, read in place: a static function taking the state copied all of it.)
        var isDone: Bool { readerDone && ready.isEmpty && scheduler.running == 0 && scheduler.queued == 0 }

        /// Whether the reader may hand over more URLs.
        func hasRoom(_ queueLimit: Int) -> Bool {
            cancelled || scheduler.queued + (Defaults.batchStoredEntryWeight - 1) * queuedWithEntry < queueLimit
        }
    }

    private let state: Locked<State>
    /// Queued URLs the reader may hand over before it waits (memory stays flat).
    private let queueLimit: Int
    private let onFail: @Sendable (HostLoad, HostFailure) -> Void
    private let onCancelled: @Sendable (HostLoad) -> Void
    private let onStarted: @Sendable ([HostLoad]) -> Void
    private let onNote: (@Sendable (HostNote) -> Void)?
    private let onGaveUp: @Sendable (HostKey, HostFailure) -> Void
    /// Set before `onGaveUp` is first called: until then no gate need look
    /// its host up before each attempt (`HostAttemptGate.refusal`).
    private let gaveUpAHost = Atomic<Bool>(false)

    /// `onGaveUp`: a host was given up on; its queued URLs are failed
    /// (`onFail`), its running attempts that have not reached it yet are the callee's to end.
    /// `onNote` hears each note under the lock, in the order the scheduler
    /// decided them (outside it, two steps on two threads could swap them):
    /// it must only queue the note (`BatchChannel.send(note:)`), never call back.
    init(policy: HostPolicy, queueLimit: Int, onNote: (@Sendable (HostNote) -> Void)?,
         onGaveUp: @escaping @Sendable (HostKey, HostFailure) -> Void,
         onFail: @escaping @Sendable (HostLoad, HostFailure) -> Void,
         onStarted: @escaping @Sendable ([HostLoad]) -> Void,
         onCancelled: @escaping @Sendable (HostLoad) -> Void) {
        state = Locked(State(scheduler: Scheduler(policy: policy)))
        self.queueLimit = max(1, queueLimit)
        self.onFail = onFail
        self.onCancelled = onCancelled
        self.onStarted = onStarted
        self.onNote = onNote
        self.onGaveUp = onGaveUp
    }

    // MARK: The reader's side

    /// Hands URLs to their hosts' queues, in order (or reports them
    /// cancelled, after `cancel`), under one lock.
    func enqueue(_ loads: [HostLoad]) {
        if loads.isEmpty { return }
        var refused = false
        step { state, now in
            if state.cancelled {
                refused = true
                return []
            }
            for load in loads where load.hasEntry { state.queuedWithEntry += 1 }
            return loads.flatMap { state.scheduler.enqueue(.load($0), host: $0.host, now: now) }
        }
        if refused { loads.forEach(onCancelled) }
    }

    /// Returns once fewer than `queueLimit` URLs are queued (a load with a
    /// stored entry counting `Defaults.batchStoredEntryWeight` times).
    func waitForQueueRoom() async {
        while true {
            let room = state.withLock { $0.hasRoom(queueLimit) }
            if room { return }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let parked = ParkedContinuation(continuation)
                let now = state.withLock { state -> Bool in
                    if state.hasRoom(queueLimit) { return true }
                    state.reader = parked
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

    /// Every load started since the last call, in the order the scheduler
    /// started them (waits for one); empty when the reader is done and
    /// nothing is queued, paused or running.
    func nextStarts() async -> [HostLoad] {
        await withCheckedContinuation { (continuation: CheckedContinuation<[HostLoad], Never>) in
            let answer = state.withLock { state -> [HostLoad]? in
                if !state.ready.isEmpty { return Self.takeReady(&state) }
                if state.isDone { return [] }
                state.consumer = ParkedContinuation(continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// A load ends; it gives its slot back unless its gate had given it up,
    /// and reports its answer, if it got one, in the same step.
    /// With `handOut`, the loads this lets the scheduler start (reported
    /// started already) are returned for the caller to start, rather than
    /// handed to the main loop (`BatchLoads`: no wake-up of the main loop).
    @discardableResult
    func finished(gate: HostAttemptGate, handOut: Bool = false) -> [HostLoad] {
        let end = gate.end
        let outcome: Scheduler.Outcome? = end.answered ? .answered : nil
        guard end.holdsSlot else {
            if let outcome { step { $0.scheduler.report(outcome, host: gate.host, now: $1) } }
            return []
        }
        return step(handOut: handOut) { state, now, actions in
            state.scheduler.finished(host: gate.host, after: outcome, now: now, into: &actions)
        }
    }

    /// `finished(gate:handOut:)` of several loads at once (a transfer loop's
    /// round: `BatchLoads`): the slots they hold are given back, with their
    /// answers, in one step (one lock, one fill).
    func finished(gates: [HostAttemptGate], handOut: Bool) -> [HostLoad] {
        var released: [(host: HostKey, outcome: Scheduler.Outcome?)] = []
        released.reserveCapacity(gates.count)
        var handedOut: [HostLoad] = []
        for gate in gates {
            let end = gate.end
            guard end.holdsSlot else {   // rare: one step of its own, as `finished(gate:)` takes
                handedOut += finished(gate: gate, handOut: handOut)
                continue
            }
            released.append((gate.host, end.answered ? .answered : nil))
        }
        if released.isEmpty { return handedOut }
        let started = step(handOut: handOut) { $0.scheduler.finished(released, now: $1) }
        return handedOut.isEmpty ? started : handedOut + started
    }

    /// Ctrl-C: every queued URL is reported (loads) or released (pushed-back
    /// fetches, which then fail as cancelled); later starts are reported too.
    func cancel() {
        let (drained, timer) = state.withLock { state -> ([Ticket], Task<Void, Never>?) in
            state.cancelled = true
            state.queuedWithEntry = 0
            defer { state.timer = nil }
            return (state.scheduler.drain(), state.timer)
        }
        timer?.cancel()
        for ticket in drained {
            switch ticket {
            case .load(let load): onCancelled(load)
            case .resume(let gate): _ = gate.resume(.cancelled)
            case .upload(let waiter): waiter.resume(returning: false)
            }
        }
        step { _, _ in [] }
    }

    // MARK: The gates' side

    func report(_ outcome: Scheduler.Outcome, host: HostKey, proxy: String? = nil, requeueing: Bool = false) {
        // Most reports (each URL's connection and response) change nothing: one look, no step.
        if state.withLock({ $0.scheduler.changesNothing(outcome, host: host) }) { return }
        step { $0.scheduler.report(outcome, host: host, proxy: proxy, requeueing: requeueing, now: $1) }
    }

    /// Gives the gate's slot back and queues it at the front of its host, to
    /// be resumed when the host takes work again. False, changing nothing,
    /// when the batch was cancelled or the gate's wait has ended already (its
    /// task was cancelled): the URL then still holds its slot, which its end
    /// gives back. Decided in the step that queues it: looked at in a lock
    /// section of its own, a `cancel` in between drained the queues first,
    /// and the gate was then queued at a paused host that no timer wakes once
    /// cancelled (an interrupted batch never ended).
    func requeue(_ gate: HostAttemptGate) -> Bool {
        var queued = false
        step { state, now in
            // The gate's lock inside this one (`HostAttemptGate.givesSlotBack`; never the other way round).
            guard !state.cancelled, gate.givesSlotBack() else { return [] }
            queued = true
            return state.scheduler.finished(host: gate.host, requeue: .resume(gate), now: now)
        }
        return queued
    }

    func failure(of host: HostKey) -> HostFailure? { state.withLock { $0.scheduler.failure(of: host) } }

    /// Whether a host has been given up on and the owner told (`onGaveUp`):
    /// one atomic load, where `failure(of:)` takes the lock and looks the host up.
    var hasGivenUpAHost: Bool { gaveUpAHost.load(ordering: .acquiring) }

    /// Whether `host` has URLs waiting for a slot.
    func hasQueued(_ host: HostKey) -> Bool { state.withLock { $0.scheduler.queued(on: host) > 0 } }

    // MARK: The remote tier's side

    /// Runs an upload holding one of the batch's `jobs` slots, of no host
    /// (SPEC §6: `--jobs` bounds transfers in all): it waits for one, in turn
    /// with the hosts' URLs (free slots alternate between the two while
    /// both wait), and never makes a URL wait for it to end. False without
    /// running it when the batch is cancelled before it has a slot.
    func run(_ work: () async -> Void) async -> Bool {
        let granted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let parked = ParkedContinuation(continuation)
            var refused = false
            step { state, now in
                if state.cancelled {
                    refused = true
                    return []
                }
                return state.scheduler.borrow(.upload(parked), now: now)
            }
            if refused { parked.resume(returning: false) }
        }
        guard granted else { return false }
        await work()
        step { $0.scheduler.giveBack(now: $1) }
        return true
    }

    // MARK: Reporting

    var counts: HostCounts { state.withLock { $0.scheduler.counts } }

    /// Hosts with a transfer running, and hosts paused now.
    var activity: (active: Int, paused: Int) { state.withLock { $0.scheduler.activity(now: monotonicSeconds()) } }
    /// Items holding a slot now.
    var running: Int { state.withLock { $0.scheduler.running } }

    // MARK: Inside

    /// The ready loads, taken whole (the array moves out; no copy).
    private static func takeReady(_ state: inout State) -> [HostLoad] {
        var taken: [HostLoad] = []
        swap(&taken, &state.ready)
        return taken
    }

    /// What `step` found under the lock: the new loads the scheduler
    /// started, its other actions, whether the batch was cancelled, and
    /// whom to wake (when no load was started; else after they are reported).
    private struct Stepped {
        var started: [HostLoad]
        var actions: [Scheduler.Action]
        var cancelled: Bool
        var wake: Wake

        /// `actions` are taken, each moved out (it is left empty, its storage kept): read in
        /// place they were copied through their value witnesses, and destroyed with the array.
        static func take(_ actions: inout [Scheduler.Action], _ state: inout State, queueLimit: Int, handOut: Bool = false,
                         onNote: (@Sendable (HostNote) -> Void)?) -> Stepped {
            var started: [HostLoad] = []
            var others: [Scheduler.Action] = []
            actions.reverse()   // popped from the end, in order
            while let action = actions.popLast() {
                // Every way a load leaves the queue (started, failed at once; `cancel` drains the rest)
                // counts it out of `queuedWithEntry`. One match per action: each copies the load out of its box.
                switch consume action {
                case .start(.load(var load), let host, let waited):
                    if load.hasEntry { state.queuedWithEntry -= 1 }
                    load.waited = waited
                    let facts = state.scheduler.startFacts(on: host)
                    load.hostKnown = facts.known
                    load.hostQueued = facts.queued
                    started.append(load)
                case .fail(.load(let load), let host, let failure):
                    if load.hasEntry { state.queuedWithEntry -= 1 }
                    others.append(.fail(.load(load), host, failure))
                case .note(let note):
                    onNote?(note)
                    others.append(.note(note))
                case let other:
                    others.append(other)
                }
            }
            let cancelled = state.cancelled
            let wake = started.isEmpty || cancelled || handOut ? HostDispatch.takeWaiters(&state, queueLimit) : Wake()
            return Stepped(started: started, actions: others, cancelled: cancelled, wake: wake)
        }
    }

    /// The waiters one step wakes: taken under the lock, resumed outside it.
    private struct Wake {
        var consumer: ParkedContinuation<[HostLoad]>?
        var loads: [HostLoad] = []
        var reader: ParkedContinuation<Void>?
        var timerDue: Double?
    }

    /// Runs one scheduler call under the lock, then carries out its actions
    /// outside it (a start that is a pushed-back fetch whose task was
    /// cancelled gives its slot straight back, which may start others).
    /// New loads are reported started (`onStarted`, all at once) before the
    /// main loop can take them: each URL's `loading` comes before its end.
    /// With `handOut` the loads the call itself started are returned instead.
    @discardableResult
    private func step(handOut: Bool = false, _ body: (inout State, Double) -> [Scheduler.Action]) -> [HostLoad] {
        step(handOut: handOut) { state, now, actions in actions += body(&state, now) }
    }

    /// `step`, the scheduler call appending its actions to the state's kept array (`State.actions`).
    @discardableResult
    private func step(handOut: Bool = false, _ body: (inout State, Double, inout [Scheduler.Action]) -> Void) -> [HostLoad] {
        var stepped = state.withLock { state in
            var actions: [Scheduler.Action] = []
            swap(&actions, &state.actions)   // out of the state while `body` changes it
            defer { swap(&actions, &state.actions) }
            body(&state, monotonicSeconds(), &actions)
            return Stepped.take(&actions, &state, queueLimit: queueLimit, handOut: handOut, onNote: onNote)
        }
        var handedOut: [HostLoad] = []
        if handOut && !stepped.cancelled && !stepped.started.isEmpty {
            onStarted(stepped.started)
            swap(&handedOut, &stepped.started)
        }
        while true {
            var released: [HostKey] = []
            if !stepped.started.isEmpty {
                if stepped.cancelled {
                    for load in stepped.started {
                        onCancelled(load)
                        released.append(load.host)
                    }
                } else {
                    onStarted(stepped.started)
                    let started = stepped.started
                    stepped.wake = state.withLock { state in
                        state.ready.append(contentsOf: started)
                        return Self.takeWaiters(&state, queueLimit)
                    }
                }
            }
            for action in stepped.actions {
                switch action {
                case .start(.load, _, _), .start(.upload, _, _), .fail(.upload, _, _):
                    break   // `Stepped` took every new load; uploads are only lent slots
                case .start(.resume(let gate), let host, _):
                    if !gate.resume(.tryAgain) { released.append(host) }
                case .fail(.load(let load), _, let failure):
                    onFail(load, failure)
                case .fail(.resume(let gate), _, _):
                    _ = gate.resume(.stop)
                case .lend(let ticket):
                    if case .upload(let waiter) = ticket { waiter.resume(returning: true) }
                case .note(let note):
                    // Heard already, under the lock (`Stepped`).
                    if case .gaveUp(let host, let failure) = note {
                        gaveUpAHost.store(true, ordering: .releasing)
                        onGaveUp(host, failure)
                    }
                }
            }
            resume(stepped.wake)
            if released.isEmpty { return handedOut }
            // Slots given straight back may start others: one more round, as above.
            stepped = state.withLock { state in
                let now = monotonicSeconds()
                var actions = released.flatMap { state.scheduler.finished(host: $0, now: now) }
                return Stepped.take(&actions, &state, queueLimit: queueLimit, onNote: onNote)
            }
        }
    }

    /// Under the lock: the main loop's wake-up (loads are ready, or all is
    /// done), the reader's (room in the queues), and the timer to arm for
    /// the next pause end.
    private static func takeWaiters(_ state: inout State, _ queueLimit: Int) -> Wake {
        var wake = Wake()
        // `isDone` spelled out: called here, it copied the whole state first (its layout is known
        // only at run time: a copy through its value witnesses, then a destroy, ~0.9 k instructions a step).
        if state.consumer != nil,
           !state.ready.isEmpty || (state.readerDone && state.scheduler.running == 0 && state.scheduler.queued == 0) {
            wake.consumer = state.consumer
            state.consumer = nil
            wake.loads = takeReady(&state)
        }
        if state.reader != nil, state.hasRoom(queueLimit) {
            wake.reader = state.reader
            state.reader = nil
        }
        if let due = timerToArm(nextWake: state.scheduler.nextWake, armed: state.timerDue, cancelled: state.cancelled) {
            state.timerDue = due
            state.timer?.cancel()
            wake.timerDue = due
        }
        return wake
    }

    /// The pause end to arm the timer for: the scheduler's next one, unless
    /// the batch is cancelled or a timer is armed for it or an earlier one.
    /// One already past is armed too (it fires at once): the step that found
    /// it read the clock before, when the pause was not over, and nothing
    /// else may come to end it. Skipping it (when it was not in the future
    /// by a second reading of the clock, after a step that also started
    /// loads) left a host paused for good at the end of a batch, its URLs
    /// never started (an engine test under TSan waited out its 3 minutes).
    static func timerToArm(nextWake: Double?, armed: Double?, cancelled: Bool) -> Double? {
        guard !cancelled, let due = nextWake, armed.map({ due < $0 }) ?? true else { return nil }
        return due
    }

    private func resume(_ wake: Wake) {
        wake.consumer?.resume(returning: wake.loads)
        wake.reader?.resume()
        if let due = wake.timerDue { arm(at: due) }
    }

    fileprivate func arm(at due: Double) {
        let timer = Task { [weak self] in
            let delay = max(0, due - monotonicSeconds())
            do { try await Task.sleep(nanoseconds: UInt64((delay + Defaults.hostPauseTimerSlack) * 1e9)) } catch { return }
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
