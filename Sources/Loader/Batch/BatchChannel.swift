import Support

/// The queue between a batch's work and its consumer.
///
/// Unlike `AsyncStream` it has backpressure: the producer waits while
/// `backlog` events are queued, so a million cache answers never pile up in
/// memory. And it wakes a waiting consumer once per run of events rather
/// than once per event: a consumer woken for every cache answer costs a
/// thread wake-up (several microseconds) each.
///
/// The producers do the waking, as they queue (`EventDemand`): an urgent
/// event, a run of `runLength` events, or an event queued behind one that
/// has waited `latency` wakes the consumer at once. One timer per channel
/// (`runBackstop`, a task that ticks every `tailLatency` while events come
/// and sleeps when none do) wakes it for the last events of a run, which no
/// later event follows. Before, every run of events had a task of its own
/// that slept `latency` and then woke the consumer: a pool thread, the
/// timer and the consumer woken per run (about 300 runs per second of a
/// cold batch).
///
/// Host notes (`send(note:)`) travel in the same order: each is handed to
/// `onNote` by the consumer's `next`, after the events queued before it
/// and before those queued after, so a reader of both sees them in the
/// order the batch decided them, however slowly it reads.
final class BatchChannel: Sendable {
    private let backlog: Int
    private let demand: EventDemand
    private let onNote: (@Sendable (HostNote) -> Void)?
    private let state: Locked<State>

    private struct State {
        let backlog: Int
        var queue = FIFO<LoadEvent>()
        var consumer: ParkedContinuation<LoadEvent?>?
        var producer: ParkedContinuation<Void>?
        /// When the first event queued behind a waiting consumer came: the
        /// consumer waits only with an empty queue, so the queued events all
        /// came after it and this is the oldest one's time.
        var pendingSince = 0.0
        var backstop = Backstop.none
        var finished = false
        var abandoned = false
        var distinctCount = 0
        var duplicateCount = 0
        /// Events ever queued, and ever taken.
        var sent = 0
        var taken = 0
        /// Notes not handed over yet, each with `sent` when it came: it is
        /// due once that many events are taken, before the next one.
        var notes: [(after: Int, note: HostNote)] = []
        /// Producers woken by `takeConsumer`, resumed after the lock is released.
        var producersToResume: [ParkedContinuation<Void>] = []

        var room: Int? {
            let queued = queue.count
            if abandoned { return max(1, backlog - queued) }
            return queued < backlog ? backlog - queued : nil
        }

        /// Whether the consumer waits while events are queued (only events
        /// queued since it began to wait: it waits only for an empty queue).
        var consumerWaitsWithEvents: Bool { consumer != nil && !queue.isEmpty }

        /// Whether a note is due before the next event (the consumer hands it over first).
        var noteDue: Bool { notes.first.map { $0.after <= taken } ?? false }

        mutating func takeDueNotes() -> [HostNote] {
            let due = notes.prefix { $0.after <= taken }.map(\.note)
            notes.removeFirst(due.count)
            return due
        }

        mutating func pop() -> LoadEvent? {
            guard !queue.isEmpty else { return nil }
            taken += 1
            // Moved out, not copied (a copy retains every string of the event; the
            // placeholder left behind holds nothing).
            return queue.popFirst(leaving: LoadEvent(url: "", phase: .loading(nil), duration: 0))
        }

        /// Hands the next event to the waiting consumer. Popping makes room, so a
        /// producer waiting for room is woken too (`producersToResume`): otherwise,
        /// with a backlog of 1, both could end up waiting for each other.
        mutating func takeConsumer() -> (ParkedContinuation<LoadEvent?>, LoadEvent)? {
            guard let waiting = consumer, let event = pop() else { return nil }
            consumer = nil
            if let producer = takeProducer() { producersToResume.append(producer) }
            return (waiting, event)
        }

        /// The producer resumes once the queue has drained to half the backlog.
        mutating func takeProducer() -> ParkedContinuation<Void>? {
            guard let waiting = producer, queue.count <= backlog / 2 else { return nil }
            producer = nil
            return waiting
        }
    }

    /// The timer that wakes the consumer for events no later event follows.
    private enum Backstop {
        /// Not started: no event has yet had to wait for it.
        case none
        /// Sleeping `tailLatency`, then it looks at the queue.
        case ticking(Task<Void, Never>)
        /// Nothing was queued at its last look: it waits to be started again.
        case parked(Task<Void, Never>, ParkedContinuation<Bool>)
        /// The channel finished or was abandoned.
        case ended

        var task: Task<Void, Never>? {
            switch self {
            case .ticking(let task), .parked(let task, _): return task
            case .none, .ended: return nil
            }
        }
    }

    /// `onNote` hears the notes (`send(note:)`), on the consumer's task, in order with the events.
    init(backlog: Int, demand: EventDemand = .everything, onNote: (@Sendable (HostNote) -> Void)? = nil) {
        self.backlog = max(1, backlog)
        self.demand = demand
        self.onNote = onNote
        state = Locked(State(backlog: self.backlog))
    }

    var counts: (distinct: Int, duplicates: Int) { state.withLock { ($0.distinctCount, $0.duplicateCount) } }
    /// Events queued so far (handed over or not): where a note sent now
    /// would be heard.
    var eventsSent: Int { state.withLock { $0.sent } }
    /// The consumer is gone: nothing more is worth reading.
    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    // MARK: Producer side

    func send(_ event: consuming LoadEvent, urgent: Bool) {
        // Moved into the queue (`take`): appended from the closure's capture, the event was copied
        // (a retain of each of its strings and boxes) and the caller's destroyed.
        var event = Optional(event)
        enqueue(urgent: urgent) { state in
            state.queue.append(event.take()!)
            state.sent += 1
        }
    }

    /// Queues a host note behind the events queued so far, and wakes a
    /// waiting consumer at once, as an urgent event does: it takes the
    /// events before the note, then hears the note. Called by the host
    /// scheduler under its lock (the notes' order is its decisions'): this
    /// only queues, and resumes a waiting consumer.
    func send(note: HostNote) {
        guard onNote != nil else { return }
        let (consumer, first) = state.withLock { state -> (ParkedContinuation<LoadEvent?>?, LoadEvent?) in
            if state.abandoned { return (nil, nil) }
            state.notes.append((after: state.sent, note: note))
            guard state.consumer != nil else { return (nil, nil) }
            if let (continuation, event) = state.takeConsumer() { return (continuation, event) }
            // Nothing queued: woken with no event, the consumer looks again and finds the note due.
            defer { state.consumer = nil }
            return (state.consumer, nil)
        }
        guard let consumer else { return }
        consumer.resume(returning: first)
        if first != nil { resumeWokenProducers() }
    }

    /// Queues a run of cache answers under one lock (none is urgent), and
    /// counts the URLs taken up meanwhile (`counts`). Takes the events:
    /// `events` is left empty (moved into an empty queue whole, not copied).
    func send(contentsOf events: inout [LoadEvent], distinct: Int, duplicates: Int) {
        enqueue(urgent: false) { state in
            state.distinctCount += distinct
            state.duplicateCount += duplicates
            state.sent += events.count
            state.queue.append(contentsOf: &events)
        }
        events.removeAll(keepingCapacity: true)
    }

    /// What a producer's `enqueue` found to do after the lock.
    private enum Wake {
        case none
        case consumer(ParkedContinuation<LoadEvent?>, LoadEvent)
        case resumeBackstop(ParkedContinuation<Bool>)
    }

    /// `add` appends to the queue under the lock; then the consumer, if it
    /// waits, is woken now (urgent, a run's worth queued, or the oldest
    /// queued event has waited `latency`), or the backstop timer is made
    /// sure to be ticking.
    private func enqueue(urgent: Bool, _ add: (inout State) -> Void) {
        let wake = state.withLock { state -> Wake in
            let wasEmpty = state.queue.isEmpty
            add(&state)
            if state.abandoned {   // nobody reads them any more
                state.queue.removeAll()
                return .none
            }
            guard state.consumerWaitsWithEvents else { return .none }
            // A full backlog stops the producer: wake the consumer now, not after the delay.
            if urgent || state.queue.count >= min(demand.runLength, backlog) {
                if let (consumer, first) = state.takeConsumer() { return .consumer(consumer, first) }   // moved, not copied
                return .none
            }
            let now = monotonicSeconds()
            if wasEmpty {
                state.pendingSince = now
            } else if now - state.pendingSince >= demand.latency {
                if let (consumer, first) = state.takeConsumer() { return .consumer(consumer, first) }   // moved, not copied
                return .none
            }
            switch state.backstop {
            case .ticking, .ended:
                return .none
            case .parked(let task, let continuation):
                state.backstop = .ticking(task)
                return .resumeBackstop(continuation)
            case .none:
                // Made under the lock, so only one is: it sleeps before it takes the lock.
                state.backstop = .ticking(Task { [self] in await runBackstop() })
                return .none
            }
        }
        switch wake {
        case .none:
            break
        case .consumer(let continuation, let first):
            continuation.resume(returning: first)
            resumeWokenProducers()
        case .resumeBackstop(let continuation):
            continuation.resume(returning: true)
        }
    }

    /// The backstop: every `tailLatency` while events come, it wakes a
    /// waiting consumer for events that have waited `latency`; it parks
    /// once it finds nothing queued, until a producer queues an event
    /// behind a waiting consumer again, and then first sleeps only
    /// `latency` (an event into an idle channel waits no longer than that);
    /// it ends with the channel. Its first sleep, for the batch's first
    /// events, is at most `EventDemand.everything`'s latency whatever the
    /// demand: the first write happens at once, so a run whose output
    /// cannot be written stops before it has started more transfers.
    private func runBackstop() async {
        var sleep = min(demand.latency, EventDemand.everything.latency)
        while true {
            try? await Task.sleep(nanoseconds: UInt64(sleep * 1e9))
            // Events queued since the sleep began are left for the next look (or a producer).
            let due = min(demand.latency, sleep)
            sleep = demand.tailLatency
            enum Look { case wake(ParkedContinuation<LoadEvent?>, LoadEvent), tickAgain, park, end }
            let look = state.withLock { state -> Look in
                // `finish` and `abandon` mark the backstop ended themselves.
                if state.finished || state.abandoned || Task.isCancelled { return .end }
                if state.queue.isEmpty { return .park }
                guard state.consumerWaitsWithEvents,
                      monotonicSeconds() - state.pendingSince >= due,
                      let (continuation, first) = state.takeConsumer() else { return .tickAgain }
                return .wake(continuation, first)
            }
            switch look {
            case .end:
                return
            case .tickAgain:
                continue
            case .wake(let continuation, let first):
                continuation.resume(returning: first)
                resumeWokenProducers()
            case .park:
                let goOn = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let now = state.withLock { state -> Bool? in
                        if state.finished || state.abandoned { return false }
                        // An event queued since the look, with the backstop still ticking: keep ticking.
                        if state.consumerWaitsWithEvents { return true }
                        guard let task = state.backstop.task else { return false }
                        state.backstop = .parked(task, ParkedContinuation(continuation))
                        return nil
                    }
                    if let now { continuation.resume(returning: now) }
                }
                if !goOn { return }
                sleep = demand.latency
            }
        }
    }

    /// Ends the backstop (the channel finished or was abandoned): a parked
    /// one is resumed to return, a ticking one is cancelled out of its sleep.
    private static func endBackstop(_ state: inout State) -> (Task<Void, Never>?, ParkedContinuation<Bool>?) {
        defer { state.backstop = .ended }
        switch state.backstop {
        case .ticking(let task): return (task, nil)
        case .parked(_, let continuation): return (nil, continuation)
        case .none, .ended: return (nil, nil)
        }
    }

    /// No more events.
    func finish() {
        typealias Backstop = (Task<Void, Never>?, ParkedContinuation<Bool>?)
        let (wake, backstop) = state.withLock { state -> (ParkedContinuation<LoadEvent?>?, Backstop) in
            state.finished = true
            let backstop = Self.endBackstop(&state)
            if !state.queue.isEmpty { return (nil, backstop) }   // the consumer takes the rest first
            defer { state.consumer = nil }
            return (state.consumer, backstop)
        }
        backstop.0?.cancel()
        backstop.1?.resume(returning: false)
        wake?.resume(returning: nil)
        flush()
    }

    /// Returns at once unless `backlog` events are queued, with how many
    /// more fit (at least 1). Not cancellable on purpose: after
    /// `LoadBatch.cancel()` the consumer still takes every event; if the
    /// consumer goes away the channel is abandoned.
    @discardableResult
    func waitForRoom() async -> Int {
        while true {
            if let room = state.withLock({ $0.room }) { return room }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.room != nil { return true }
                    state.producer = ParkedContinuation(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    /// Wakes a waiting consumer for what is queued (the rest, at the end).
    private func flush() {
        let wake = state.withLock { state -> (ParkedContinuation<LoadEvent?>, LoadEvent)? in
            guard state.consumerWaitsWithEvents else { return nil }
            return state.takeConsumer()
        }
        if let (continuation, first) = wake {
            continuation.resume(returning: first)
            resumeWokenProducers()
        }
    }

    // MARK: Consumer side

    /// The next event, or nil at the end; the notes due before it are
    /// handed to `onNote` first. Cancelling the consuming task abandons the
    /// channel and returns nil (`onAbandon` then cancels the work).
    func next(onAbandon: @escaping @Sendable () -> Void) async -> LoadEvent? {
        enum Step { case event(LoadEvent, ParkedContinuation<Void>?), notes([HostNote]), end, wait }
        while true {
            let step = state.withLock { state -> Step in
                if state.noteDue { return .notes(state.takeDueNotes()) }
                if let event = state.pop() { return .event(event, state.takeProducer()) }
                return state.finished || state.abandoned ? .end : .wait
            }
            switch step {
            case .notes(let notes):
                for note in notes { onNote?(note) }
            case .event(let event, let producer):
                producer?.resume()
                return event
            case .end:
                return nil
            case .wait:
                let woken = await withTaskCancellationHandler {
                    await withCheckedContinuation { (continuation: CheckedContinuation<LoadEvent?, Never>) in
                        let immediate = state.withLock { state -> (LoadEvent?, ParkedContinuation<Void>?, Bool) in
                            if state.noteDue { return (nil, nil, true) }
                            if let event = state.pop() { return (event, state.takeProducer(), true) }
                            if state.finished || state.abandoned { return (nil, nil, true) }
                            state.consumer = ParkedContinuation(continuation)
                            return (nil, nil, false)
                        }
                        if immediate.2 {
                            immediate.1?.resume()
                            continuation.resume(returning: immediate.0)
                        }
                    }
                } onCancel: {
                    abandon()
                    onAbandon()
                }
                // Nil: the end, or a note to hand over (`send(note:)`): look again.
                if let woken { return woken }
            }
        }
    }

    /// Waits like `next` for the first event, then takes the events queued
    /// behind it too (up to `limit` in all) under the same lock: a consumer
    /// of 10,000 cache answers takes a lock per run of events, not per event.
    /// `events` is emptied first; it is left empty at the end.
    func next(into events: inout [LoadEvent], limit: Int, onAbandon: @escaping @Sendable () -> Void) async {
        events.removeAll(keepingCapacity: true)
        guard let first = await next(onAbandon: onAbandon) else { return }
        events.append(first)
        let producer = state.withLock { state -> ParkedContinuation<Void>? in
            // Up to the next note: it is heard before the events after it (the next call).
            while events.count < limit, !state.noteDue, let event = state.pop() { events.append(event) }
            return state.takeProducer()
        }
        producer?.resume()
    }

    /// The consumer is gone: drop what is queued, release everyone.
    func abandon() {
        typealias Taken = (ParkedContinuation<LoadEvent?>?, ParkedContinuation<Void>?,
                           (Task<Void, Never>?, ParkedContinuation<Bool>?))
        let (consumer, producer, backstop) = state.withLock { state -> Taken in
            state.abandoned = true
            state.queue.removeAll()
            state.notes.removeAll()
            defer { state.consumer = nil; state.producer = nil }
            return (state.consumer, state.producer, Self.endBackstop(&state))
        }
        backstop.0?.cancel()
        backstop.1?.resume(returning: false)
        consumer?.resume(returning: nil)
        producer?.resume()
    }

    private func resumeWokenProducers() {
        let woken = state.withLock { state -> [ParkedContinuation<Void>] in
            defer { state.producersToResume.removeAll() }
            return state.producersToResume
        }
        for producer in woken { producer.resume() }
    }
}
