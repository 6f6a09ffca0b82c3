import Support

/// The queue between a batch's work and its consumer.
///
/// Unlike `AsyncStream` it has backpressure: the producer waits while
/// `backlog` events are queued, so a million cache answers never pile up in
/// memory. And it wakes a waiting consumer once per run of events rather
/// than once per event: a consumer woken for every cache answer costs a
/// thread wake-up (several microseconds) each. An urgent event (a network
/// result) wakes it at once; otherwise after `wakeAfter` events or
/// `flushDelay`, whichever comes first.
final class BatchChannel: Sendable {
    private let backlog: Int
    private let wakeAfter = 64
    private let flushDelayNanoseconds: UInt64 = 5_000_000
    private let state: Locked<State>

    private struct State {
        let backlog: Int
        var queue = FIFO<LoadEvent>()
        var consumer: CheckedContinuation<LoadEvent?, Never>?
        var producer: CheckedContinuation<Void, Never>?
        var flushScheduled = false
        var finished = false
        var abandoned = false
        var distinctCount = 0
        var duplicateCount = 0
        /// Producers woken by `takeConsumer`, resumed after the lock is released.
        var producersToResume: [CheckedContinuation<Void, Never>] = []

        var room: Int? {
            let queued = queue.count
            if abandoned { return max(1, backlog - queued) }
            return queued < backlog ? backlog - queued : nil
        }

        mutating func pop() -> LoadEvent? {
            guard !queue.isEmpty else { return nil }
            // Moved out, not copied (a copy retains every string of the event; the
            // placeholder left behind holds nothing).
            return queue.popFirst(leaving: LoadEvent(url: "", phase: .loading(nil), duration: 0))
        }

        /// Hands the next event to the waiting consumer. Popping makes room, so a
        /// producer waiting for room is woken too (`producersToResume`): otherwise,
        /// with a backlog of 1, both could end up waiting for each other.
        mutating func takeConsumer() -> (CheckedContinuation<LoadEvent?, Never>, LoadEvent)? {
            guard let waiting = consumer, let event = pop() else { return nil }
            consumer = nil
            if let producer = takeProducer() { producersToResume.append(producer) }
            return (waiting, event)
        }

        /// The producer resumes once the queue has drained to half the backlog.
        mutating func takeProducer() -> CheckedContinuation<Void, Never>? {
            guard let waiting = producer, queue.count <= backlog / 2 else { return nil }
            producer = nil
            return waiting
        }
    }

    init(backlog: Int) {
        self.backlog = max(1, backlog)
        state = Locked(State(backlog: self.backlog))
    }

    var counts: (distinct: Int, duplicates: Int) { state.withLock { ($0.distinctCount, $0.duplicateCount) } }
    /// The consumer is gone: nothing more is worth reading.
    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    // MARK: Producer side

    func send(_ event: LoadEvent, urgent: Bool) {
        enqueue(urgent: urgent) { $0.queue.append(event) }
    }

    /// Queues a run of cache answers under one lock (none is urgent), and
    /// counts the URLs taken up meanwhile (`counts`). Takes the events:
    /// `events` is left empty (moved into an empty queue whole, not copied).
    func send(contentsOf events: inout [LoadEvent], distinct: Int, duplicates: Int) {
        enqueue(urgent: false) { state in
            state.distinctCount += distinct
            state.duplicateCount += duplicates
            state.queue.append(contentsOf: &events)
        }
        events.removeAll(keepingCapacity: true)
    }

    /// `add` appends to the queue under the lock; then the consumer is
    /// woken now (urgent, or a run's worth queued) or after the flush delay.
    private func enqueue(urgent: Bool, _ add: (inout State) -> Void) {
        var scheduleFlush = false
        let wake = state.withLock { state -> (CheckedContinuation<LoadEvent?, Never>, LoadEvent)? in
            add(&state)
            if state.abandoned {   // nobody reads them any more
                state.queue.removeAll()
                return nil
            }
            guard state.consumer != nil, !state.queue.isEmpty else { return nil }
            // A full backlog stops the producer: wake the consumer now, not after the flush delay.
            if urgent || state.queue.count >= min(wakeAfter, backlog) { return state.takeConsumer() }
            if !state.flushScheduled {
                state.flushScheduled = true
                scheduleFlush = true
            }
            return nil
        }
        if let (continuation, first) = wake {
            continuation.resume(returning: first)
            resumeWokenProducers()
        }
        if scheduleFlush {
            Task { [self] in
                try? await Task.sleep(nanoseconds: flushDelayNanoseconds)
                flush()
            }
        }
    }

    /// No more events.
    func finish() {
        let wake = state.withLock { state -> CheckedContinuation<LoadEvent?, Never>? in
            state.finished = true
            if !state.queue.isEmpty { return nil }   // the consumer takes the rest first
            defer { state.consumer = nil }
            return state.consumer
        }
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
                    state.producer = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    private func flush() {
        let wake = state.withLock { state -> (CheckedContinuation<LoadEvent?, Never>, LoadEvent)? in
            state.flushScheduled = false
            guard state.consumer != nil, !state.queue.isEmpty else { return nil }
            return state.takeConsumer()
        }
        if let (continuation, first) = wake {
            continuation.resume(returning: first)
            resumeWokenProducers()
        }
    }

    // MARK: Consumer side

    /// The next event, or nil at the end. Cancelling the consuming task
    /// abandons the channel and returns nil (`onAbandon` then cancels the work).
    func next(onAbandon: @escaping @Sendable () -> Void) async -> LoadEvent? {
        enum Step { case event(LoadEvent, CheckedContinuation<Void, Never>?), end, wait }
        let step = state.withLock { state -> Step in
            if let event = state.pop() { return .event(event, state.takeProducer()) }
            return state.finished || state.abandoned ? .end : .wait
        }
        switch step {
        case .event(let event, let producer):
            producer?.resume()
            return event
        case .end:
            return nil
        case .wait:
            return await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<LoadEvent?, Never>) in
                    let immediate = state.withLock { state -> (LoadEvent?, CheckedContinuation<Void, Never>?, Bool) in
                        if let event = state.pop() { return (event, state.takeProducer(), true) }
                        if state.finished || state.abandoned { return (nil, nil, true) }
                        state.consumer = continuation
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
        let producer = state.withLock { state -> CheckedContinuation<Void, Never>? in
            while events.count < limit, let event = state.pop() { events.append(event) }
            return state.takeProducer()
        }
        producer?.resume()
    }

    /// The consumer is gone: drop what is queued, release everyone.
    func abandon() {
        let (consumer, producer) = state.withLock { state -> (CheckedContinuation<LoadEvent?, Never>?, CheckedContinuation<Void, Never>?) in
            state.abandoned = true
            state.queue.removeAll()
            defer { state.consumer = nil; state.producer = nil }
            return (state.consumer, state.producer)
        }
        consumer?.resume(returning: nil)
        producer?.resume()
    }

    private func resumeWokenProducers() {
        let woken = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            defer { state.producersToResume.removeAll() }
            return state.producersToResume
        }
        for producer in woken { producer.resume() }
    }
}
