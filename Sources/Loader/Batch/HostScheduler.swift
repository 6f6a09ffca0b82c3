import Support

/// Which queued URL starts next, per host: a state machine with no clock,
/// no sockets and no threads of its own. The owner (the batch) calls it
/// with the time, and does what the returned actions say: start an item,
/// fail it without trying, report a note. The decisions themselves are
/// `HostPolicy`'s pure functions.
///
/// - One queue per host (`HostKey`); hosts with ready work share the
///   `jobs` global slots (see `HostPolicy.prefers`), each below its own limit.
/// - An item waiting for its host holds no global slot: it stays queued
///   until its host can take it.
/// - A host's items start in order, back to back, so they reuse its warm
///   connections.
/// - A 429 or 503 pauses the whole host (its running transfers go on), and
///   a 429 halves its limit; a run of answers grows it back by one.
/// - `giveUpAfter` connect failures (connections refused, or closed before
///   any byte of an answer) or timeouts in a row, or a name that
///   does not resolve, and the host's queued and later items fail at once (the
///   `gaveUp` note tells the owner, which ends the host's attempts that
///   have no answer yet).
///
/// Memory: a host's state is dropped as soon as it has nothing queued or
/// running and nothing to remember (see `HostState.isForgettable`), so only
/// hosts with work, a pause, a reduced limit or a failure streak are held.
///
/// Meant to be held by one owner at a time (inside `Locked`). The `start`
/// action names the host; the transfer loops keep each host on one loop
/// (`TransferLoops`), so its connections are reused.
public struct HostScheduler<Item> {
    /// How an attempt on a host ended, as far as the host is concerned.
    public enum Outcome: Sendable, Equatable {
        /// The server answered (any status but a pushback): it is up.
        case answered
        /// A connection to the host was made (over https: its TCP connection,
        /// before the handshake): its name resolved (the host may open its
        /// other slots before the first answer).
        case connected
        /// A response began (a status line came in): the host answers, and
        /// may run its whole limit; the attempt's end reports how it went.
        case responding
        /// 429 or 503, with the `Retry-After` seconds when given.
        case pushedBack(status: Int, retryAfter: Double?)
        /// The connection was refused.
        case refused
        /// The connection was accepted, then closed or reset before any byte
        /// of an answer: counts as a connect failure, like `refused`.
        case closed
        /// The attempt timed out after its answer had started (a status line came).
        case timedOut
        /// No answer at all in time: a connect timeout, or not one byte of a
        /// response. Counts as a timeout, and says nothing about whether the
        /// host answers (a `timedOut` host has answered: it may run its whole limit).
        case unanswered
        /// The name did not resolve.
        case unresolved
        /// Says nothing about the host (cancelled, too large, a local error).
        case neutral
    }

    public enum Action {
        /// Start this item now; it holds a slot until `finished`. `waited`:
        /// seconds it was first in its host's line (its own wait for a slot,
        /// not that of the items before it).
        case start(Item, HostKey, waited: Double)
        /// Fail this item at once, without trying it.
        case fail(Item, HostKey, HostFailure)
        case note(HostNote)
        /// This borrower (`borrow`) holds a global slot now, of no host,
        /// until `giveBack`.
        case lend(Item)
    }

    public let policy: HostPolicy
    private var hosts: HostTable<Item>
    /// Hashes of every host seen (8 bytes each), for `counts.hosts`.
    private var seen = Set<Int>()
    private var everPaused = Set<HostKey>()
    private var order: UInt64 = 0
    private var turn = 0
    /// Items started and not yet finished, over all hosts.
    public private(set) var running = 0
    /// Items queued, over all hosts.
    public private(set) var queued = 0
    /// Global slots lent to work of no host (the remote tier's uploads), held until `giveBack`.
    public private(set) var lent = 0
    /// Borrowers waiting for a global slot, in the order they came.
    private var borrowers = FIFO<Item>()
    /// Whether the next free slot goes to a borrower when hosts have items waiting
    /// too: free slots alternate between the two, so neither waits forever.
    private var lendNext = true
    public private(set) var counts = HostCounts()

    public init(policy: HostPolicy) {
        self.policy = policy
        hosts = HostTable(policy: policy)
    }

    // MARK: Input

    /// Queues an item for its host; it starts at once if a slot is free, or
    /// fails at once if the host was given up on.
    public mutating func enqueue(_ item: Item, host: HostKey, now: Double) -> [Action] {
        if let failure = hosts.read(host, { $0.givenUp }) ?? nil { return [.fail(item, host, failure)] }
        order += 1
        var actions: [Action] = []
        if let position = hosts.position(of: host) {
            hosts.modify(at: position) { $0.append(item, now: now) }
            if !hosts.paused.isEmpty, hosts.paused.contains(host) {
                hosts.modify(at: position) { Self.announcePause(&$0, host: host, now: now, into: &actions) }
            }
        } else {
            let lane = host == policy.lane
            if !lane, seen.insert(host.hashValue).inserted { counts.hosts += 1 }
            var state = HostState<Item>(limit: lane ? policy.laneLimit : policy.jobsPerHost, served: order)
            if lane { state.heardFrom() }
            state.append(item, now: now)
            hosts[host] = state
        }
        queued += 1
        fill(now: now, into: &actions)
        return actions
    }

    /// What an attempt on `host` said about it: pauses, limit changes and
    /// give-ups, and the items that fail because of them. The item's slot is
    /// still held; `finished` releases it (an attempt's last outcome can go
    /// with it: `finished(host:after:)`, one step instead of two).
    /// `requeueing`: the item that reports it will wait for the host (`finished(requeue:)` follows).
    /// `proxy`: the proxy whose failure the outcome was (`FetchError.proxy`), named when the host is given up on.
    public mutating func report(_ outcome: Outcome, host: HostKey, proxy: String? = nil, requeueing: Bool = false,
                                now: Double) -> [Action] {
        // The host's state is copied, changed and stored back, and that copy is gone
        // before `fill` starts items in place (alive, it would share the queue's storage
        // and `start` would copy the whole queue for every URL).
        var actions: [Action] = []
        if var state = hosts[host] {
            actions = apply(outcome, to: &state, host: host, proxy: proxy, now: now, requeueing: requeueing)
            hosts[host] = state
        }
        fill(now: now, into: &actions)
        return actions
    }

    /// `requeueing`: the item that reports it goes back to the host's queue.
    private mutating func apply(_ outcome: Outcome, to state: inout HostState<Item>, host: HostKey, proxy: String? = nil,
                                now: Double, requeueing: Bool = false) -> [Action] {
        var actions: [Action] = []
        switch outcome {
        case .answered:
            Self.answered(&state, policy: policy, host: host, into: &actions)
        case .pushedBack(let status, let retryAfter):
            state.heardFrom()
            state.answersInARow = 0
            // Transfers started before the pause answer during it: one pushback per pause counts.
            if !state.isPaused(at: now) {
                state.pushbacksInARow += 1
                let seconds = policy.pauseSeconds(retryAfter: retryAfter, pushbacksInARow: state.pushbacksInARow)
                state.pausedUntil = now + seconds
                state.unannouncedPauseStatus = status
                Self.announcePause(&state, host: host, now: now, requeueing: requeueing, into: &actions)
                if everPaused.insert(host).inserted { counts.hostsPaused += 1 }
                let halved = policy.limit(state.limit, afterPushback: status)
                if halved != state.limit {
                    if state.unannouncedPauseStatus != nil {
                        // The pause's note waits for a URL it holds back: the halving it caused is said after it.
                        if state.unannouncedLimitFrom == nil { state.unannouncedLimitFrom = state.limit }
                    } else {
                        actions.append(.note(.limitChanged(host, from: state.limit, to: halved)))
                    }
                    state.limit = halved
                }
            } else if let retryAfter, let until = state.pausedUntil {
                // One asking for a longer wait than the pause has left extends it (not one more pushback).
                let seconds = policy.pauseSeconds(retryAfter: retryAfter, pushbacksInARow: state.pushbacksInARow)
                if now + seconds > until {
                    state.pausedUntil = now + seconds
                    state.unannouncedPauseStatus = status
                    Self.announcePause(&state, host: host, now: now, requeueing: requeueing, into: &actions)
                }
            }
        case .refused, .closed, .timedOut, .unanswered:
            state.resolved = true
            state.answersInARow = 0
            if outcome == .timedOut { state.answered = true }
            switch outcome {
            case .refused: state.refusalsInARow += 1
            case .closed: state.closesInARow += 1
            default: state.timeoutsInARow += 1
            }
            if state.givenUp == nil && policy.givesUp(failuresInARow: state.failuresInARow) {
                let failure = HostPolicy.giveUp(host: host, timeouts: state.timeoutsInARow, refusals: state.refusalsInARow,
                                                closes: state.closesInARow,
                                                last: outcome == .refused || outcome == .closed ? .connect : .timeout, proxy: proxy)
                actions += giveUp(&state, host, failure)
            }
        case .unresolved:
            if state.givenUp == nil { actions += giveUp(&state, host, HostPolicy.unresolved(host: host, proxy: proxy)) }
        case .connected:
            state.resolved = true
        case .responding:
            state.resolved = true
            state.answered = true
        case .neutral:
            break
        }
        return actions
    }

    /// The item started on `host` is done with its slot. With `outcome`, its
    /// attempt's last word is reported first, in the same step (`report`
    /// then `finished` as one: one lock and one fill per completed URL).
    /// With `requeue` it goes back to the front of the host's queue (a
    /// pushback: it is tried again when the host's pause ends, before the
    /// host's later items), or fails at once if the host has been given up
    /// on meanwhile.
    public mutating func finished(host: HostKey, after outcome: Outcome? = nil, requeue: Item? = nil, now: Double) -> [Action] {
        var actions: [Action] = []
        finished(host: host, after: outcome, requeue: requeue, now: now, into: &actions)
        return actions
    }

    /// `finished(host:after:requeue:now:)`, its actions appended to `actions`: an owner that
    /// keeps one array for every step's actions makes none per URL.
    public mutating func finished(host: HostKey, after outcome: Outcome? = nil, requeue: Item? = nil, now: Double,
                                  into actions: inout [Action]) {
        release(host: host, after: outcome, requeue: requeue, now: now, into: &actions)
        fill(now: now, into: &actions)
    }

    /// `finished(host:after:)` of several items at once, in order: each
    /// slot is released (its outcome reported first), then the free slots
    /// are filled, host by host in turn, as `finished` fills them (one step
    /// for the items a transfer loop's round finished).
    public mutating func finished(_ items: [(host: HostKey, outcome: Outcome?)], now: Double) -> [Action] {
        var actions: [Action] = []
        for item in items { release(host: item.host, after: item.outcome, requeue: nil, now: now, into: &actions) }
        fill(now: now, into: &actions)
        return actions
    }

    /// An answer: the host is up, its failure streaks end, and a run of
    /// answers grows its limit back (what `apply` does for `.answered`).
    private static func answered(_ state: inout HostState<Item>, policy: HostPolicy, host: HostKey,
                                 into actions: inout [Action]) {
        state.heardFrom()
        state.pushbacksInARow = 0
        state.answersInARow += 1
        let grown = policy.limit(state.limit, afterAnswers: state.answersInARow)
        if grown != state.limit {
            announceLimit(&state, host: host, into: &actions)   // a halving not said yet comes first
            actions.append(.note(.limitChanged(host, from: state.limit, to: grown)))
            state.limit = grown
        }
    }

    private mutating func release(host: HostKey, after outcome: Outcome?, requeue: Item?, now: Double,
                                  into actions: inout [Action]) {
        // Every URL's end (answered, or nothing to say, and not put back): the state changes in
        // place, one look-up. A copy read out and stored back went through the state's value
        // witnesses (its layout is known only at run time), ~1.3 k instructions per URL.
        if requeue == nil, outcome == nil || outcome == .answered {
            guard let position = hosts.position(of: host) else { return }
            running = max(0, running - 1)
            let policy = self.policy
            let forgettable = hosts.modify(at: position) { state -> Bool in
                if outcome != nil { Self.answered(&state, policy: policy, host: host, into: &actions) }
                state.finish()
                return state.isForgettable(ceiling: policy.jobsPerHost)
            }
            if forgettable { hosts.remove(at: position) }
            return
        }
        guard var state = hosts[host] else { return }   // gone before `fill`, as in `report`
        if let outcome { actions += apply(outcome, to: &state, host: host, now: now, requeueing: requeue != nil) }
        state.finish()
        running = max(0, running - 1)
        if let requeue {
            if let failure = state.givenUp {
                actions.append(.fail(requeue, host, failure))
            } else {
                state.prepend(requeue, now: now)
                queued += 1
            }
        }
        Self.announcePause(&state, host: host, now: now, into: &actions)
        store(state, host)
    }

    /// `-v`'s note of a host's pause, once a URL waits on it (queued while
    /// the host is paused, or `requeueing` to wait): a pause that holds
    /// nothing back (the host's last URL got the 429 or 503 with no retry
    /// left) goes unsaid, though it is counted (`hostsPaused`) and a URL
    /// queued later hears of it, with what is left of the pause.
    private static func announcePause(_ state: inout HostState<Item>, host: HostKey, now: Double, requeueing: Bool = false,
                                      into actions: inout [Action]) {
        guard let status = state.unannouncedPauseStatus, state.queued > 0 || requeueing, state.givenUp == nil else { return }
        if let until = state.pausedUntil, now < until {
            actions.append(.note(.paused(host, seconds: until - now, status: status)))
        }
        state.unannouncedPauseStatus = nil
        announceLimit(&state, host: host, into: &actions)
    }

    /// `-v`'s note of a limit halved by a pause whose own note waited
    /// (`announcePause`): said after the pause's, as the events happened, or
    /// before the next change of the limit.
    private static func announceLimit(_ state: inout HostState<Item>, host: HostKey, into actions: inout [Action]) {
        guard let from = state.unannouncedLimitFrom else { return }
        state.unannouncedLimitFrom = nil
        if from != state.limit { actions.append(.note(.limitChanged(host, from: from, to: state.limit))) }
    }

    /// Work of no host (an upload to the remote tier) asks for one of the
    /// `jobs` global slots: lent at once when one is free (`lend`), else
    /// when one frees, in turn with the hosts' items (`fill`).
    public mutating func borrow(_ item: Item, now: Double) -> [Action] {
        borrowers.append(item)
        return fill(now: now)
    }

    /// A lent slot is free again: it goes to the next borrower or host item.
    public mutating func giveBack(now: Double) -> [Action] {
        lent = max(0, lent - 1)
        return fill(now: now)
    }

    /// Time has passed: hosts whose pause has ended take work again.
    public mutating func tick(now: Double) -> [Action] { fill(now: now) }

    /// When the owner should call `tick` next: the earliest end of a pause
    /// of a host with queued work; nil when no such pause is waiting. A time
    /// already past needs no tick: the pause is over, and the host starts
    /// when a slot frees (every call that frees one looks).
    public var nextWake: Double? {
        // A plain loop: a key path into the generic `HostState<Item>` (`compactMap(\.pausedUntil)`)
        // is instantiated at run time on every call, and this runs after every scheduler event
        // (it was 11 % of a cold 10,000-URL run's CPU).
        var earliest: Double?
        for key in hosts.paused {
            guard let position = hosts.position(of: key), hosts.states[position].queued > 0,
                  hosts.states[position].givenUp == nil, let until = hosts.states[position].pausedUntil else { continue }
            if earliest.map({ until < $0 }) ?? true { earliest = until }
        }
        return earliest
    }

    /// Whether `report(outcome, host:)` would change nothing: a connection
    /// or a response of a host already known to connect and answer (every
    /// URL's after its host's first). Nothing changed, so no item can start
    /// because of it (a pause that ends meanwhile has its own `tick`).
    public func changesNothing(_ outcome: Outcome, host: HostKey) -> Bool {
        switch outcome {
        case .connected: return hosts.read(host) { $0.resolved } ?? false
        case .responding: return hosts.read(host) { $0.resolved && $0.answered } ?? false
        default: return false
        }
    }

    /// What an item started on `host` is told (`HostDispatch`): whether the host has
    /// connected and answered (`changesNothing(.responding, host:)`), and whether it has
    /// more items queued (`queued(on:) > 0`). One look-up, the state read in place (a
    /// `read` each copied the state out, through its value witnesses).
    public func startFacts(on host: HostKey) -> (known: Bool, queued: Bool) {
        guard let position = hosts.position(of: host) else { return (false, false) }
        return (hosts.states[position].resolved && hosts.states[position].answered, hosts.states[position].queued > 0)
    }

    /// Removes every queued item, oldest first per host, then the waiting
    /// borrowers (the batch was cancelled: each needs its terminal report or
    /// refusal). Running items and lent slots stay counted.
    public mutating func drain() -> [Item] {
        var drained: [Item] = []
        while let borrower = borrowers.popFirst() { drained.append(borrower) }
        for key in hosts.keys {
            guard var state = hosts[key] else { continue }
            drained += state.removeAll()
            store(state, key)
        }
        queued = 0
        return drained
    }

    // MARK: Queries

    /// Why `host`'s items fail at once, if it was given up on.
    public func failure(of host: HostKey) -> HostFailure? { hosts.read(host) { $0.givenUp } ?? nil }

    /// `host`'s limit now (`jobsPerHost` for a host with no state).
    public func limit(of host: HostKey) -> Int { hosts.read(host) { $0.limit } ?? policy.jobsPerHost }

    /// Items of `host` running now.
    public func running(on host: HostKey) -> Int { hosts.read(host) { $0.running } ?? 0 }

    /// Items of `host` queued now.
    public func queued(on host: HostKey) -> Int { hosts.read(host) { $0.queued } ?? 0 }

    /// Hosts whose state is held now (with work, a pause, a reduced limit,
    /// a failure streak or a give-up): what the scheduler's memory grows with.
    public var hostsHeld: Int { hosts.count }

    public func isPaused(_ host: HostKey, now: Double) -> Bool { hosts.read(host) { $0.isPaused(at: now) } ?? false }

    /// Hosts with a transfer running, and hosts paused now (the progress display; `policy.lane` is no host).
    public func activity(now: Double) -> (active: Int, paused: Int) {
        var active = 0, paused = 0
        for position in hosts.states.indices {
            if hosts.states[position].running > 0 && hosts.keys[position] != policy.lane { active += 1 }
            if hosts.states[position].isPaused(at: now) && hosts.states[position].givenUp == nil { paused += 1 }
        }
        return (active, paused)
    }

    // MARK: Inside

    private mutating func giveUp(_ state: inout HostState<Item>, _ host: HostKey, _ failure: HostFailure) -> [Action] {
        state.givenUp = failure
        state.pausedUntil = nil
        counts.hostsGivenUp += 1
        let dropped = state.removeAll()
        queued -= dropped.count
        return [.note(.gaveUp(host, failure))] + dropped.map { .fail($0, host, failure) }
    }

    private mutating func store(_ state: HostState<Item>, _ host: HostKey) {
        if state.isForgettable(ceiling: policy.jobsPerHost) {
            hosts[host] = nil
        } else {
            hosts[host] = state
        }
    }

    private mutating func fill(now: Double) -> [Action] {
        var actions: [Action] = []
        fill(now: now, into: &actions)
        return actions
    }

    /// Starts items while global slots are free and some host can take one
    /// (the next one is `hosts.best`: no scan of the hosts), appending their
    /// starts to `actions` (a step's other actions: no second array per step).
    /// Lent slots count against `jobs` as running items do; waiting
    /// borrowers take every other free slot while hosts have items to start.
    private mutating func fill(now: Double, into actions: inout [Action]) {
        guard queued > 0 || !borrowers.isEmpty, running + lent < policy.jobs else { return }
        if queued > 0, !hosts.paused.isEmpty { endPauses(now: now) }
        while running + lent < policy.jobs {
            let next = queued > 0 ? hosts.best(turn: turn) : nil
            if !borrowers.isEmpty, lendNext || next == nil, let borrower = borrowers.popFirst() {
                lent += 1
                lendNext = false
                actions.append(.lend(borrower))
                continue
            }
            guard let position = next else { break }
            lendNext = true
            turn += 1
            order += 1
            let served = order
            guard let (item, waited) = hosts.modify(at: position, { $0.start(served: served, now: now) }) else { break }
            running += 1
            queued -= 1
            actions.append(.start(item, hosts.keys[position], waited: waited))
        }
    }

    /// Clears the pauses that are over, whether or not their hosts can start now.
    private mutating func endPauses(now: Double) {
        for key in hosts.paused {
            guard let position = hosts.position(of: key), let until = hosts.states[position].pausedUntil, now >= until else { continue }
            hosts.modify(at: position) { $0.pausedUntil = nil }
        }
    }
}

extension HostScheduler: Sendable where Item: Sendable {}
extension HostScheduler.Action: Sendable where Item: Sendable {}
