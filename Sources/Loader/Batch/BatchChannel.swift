import Fetch

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
    private let lock = Lock()
    // All guarded by lock.
    private nonisolated(unsafe) var queue: [LoadEvent] = []
    private nonisolated(unsafe) var head = 0
    private nonisolated(unsafe) var consumer: CheckedContinuation<LoadEvent?, Never>?
    private nonisolated(unsafe) var producer: CheckedContinuation<Void, Never>?
    private nonisolated(unsafe) var flushScheduled = false
    private nonisolated(unsafe) var finished = false
    private nonisolated(unsafe) var abandoned = false
    private nonisolated(unsafe) var distinctCount = 0
    private nonisolated(unsafe) var duplicateCount = 0

    init(backlog: Int) { self.backlog = max(1, backlog) }

    var counts: (distinct: Int, duplicates: Int) { lock.withLock { (distinctCount, duplicateCount) } }
    /// The consumer is gone: nothing more is worth reading.
    var isAbandoned: Bool { lock.withLock { abandoned } }

    // MARK: Producer side

    func send(_ event: LoadEvent, urgent: Bool) {
        enqueue(urgent: urgent) { $0.append(event) }
    }

    /// Queues a run of cache answers under one lock (none is urgent), and
    /// counts the URLs taken up meanwhile (`counts`). Takes the events:
    /// `events` is left empty (moved into an empty queue whole, not copied).
    func send(contentsOf events: inout [LoadEvent], distinct: Int, duplicates: Int) {
        enqueue(urgent: false) { queue in
            distinctCount += distinct
            duplicateCount += duplicates
            if queue.isEmpty {
                swap(&queue, &events)
            } else {
                queue.append(contentsOf: events)
            }
        }
        events.removeAll(keepingCapacity: true)
    }

    /// `add` appends to the queue under the lock; then the consumer is
    /// woken now (urgent, or a run's worth queued) or after the flush delay.
    private func enqueue(urgent: Bool, _ add: (inout [LoadEvent]) -> Void) {
        var scheduleFlush = false
        let wake = lock.withLock { () -> (CheckedContinuation<LoadEvent?, Never>, LoadEvent)? in
            add(&queue)
            if abandoned {   // nobody reads them any more
                queue.removeAll()
                return nil
            }
            guard consumer != nil, head < queue.count else { return nil }
            // A full backlog stops the producer: wake the consumer now, not after the flush delay.
            if urgent || queue.count - head >= min(wakeAfter, backlog) { return takeConsumerLocked() }
            if !flushScheduled {
                flushScheduled = true
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
        let wake = lock.withLock { () -> CheckedContinuation<LoadEvent?, Never>? in
            finished = true
            if head < queue.count { return nil }   // the consumer takes the rest first
            defer { consumer = nil }
            return consumer
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
            if let room = lock.withLock({ roomLocked() }) { return room }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = lock.withLock { () -> Bool in
                    if roomLocked() != nil { return true }
                    producer = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    private func roomLocked() -> Int? {
        let queued = queue.count - head
        if abandoned { return max(1, backlog - queued) }
        return queued < backlog ? backlog - queued : nil
    }

    private func flush() {
        let wake = lock.withLock { () -> (CheckedContinuation<LoadEvent?, Never>, LoadEvent)? in
            flushScheduled = false
            guard consumer != nil, head < queue.count else { return nil }
            return takeConsumerLocked()
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
        let step = lock.withLock { () -> Step in
            if head < queue.count {
                let event = popLocked()
                return .event(event, takeProducerLocked())
            }
            return finished || abandoned ? .end : .wait
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
                    let immediate = lock.withLock { () -> (LoadEvent?, CheckedContinuation<Void, Never>?, Bool) in
                        if head < queue.count { return (popLocked(), takeProducerLocked(), true) }
                        if finished || abandoned { return (nil, nil, true) }
                        consumer = continuation
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

    /// The consumer is gone: drop what is queued, release everyone.
    func abandon() {
        let (consumer, producer) = lock.withLock { () -> (CheckedContinuation<LoadEvent?, Never>?, CheckedContinuation<Void, Never>?) in
            abandoned = true
            queue.removeAll()
            head = 0
            defer { self.consumer = nil; self.producer = nil }
            return (self.consumer, self.producer)
        }
        consumer?.resume(returning: nil)
        producer?.resume()
    }

    // MARK: Under the lock

    private func popLocked() -> LoadEvent {
        // Moved out, not copied (a copy retains every string of the event; the
        // placeholder left behind holds nothing).
        var event = LoadEvent(url: "", phase: .loading(nil), duration: 0)
        swap(&event, &queue[head])
        head += 1
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return event
    }

    /// Hands the next event to the waiting consumer. Popping makes room, so a
    /// producer waiting for room is woken too (`resumeProducer`): otherwise,
    /// with a backlog of 1, both could end up waiting for each other.
    private func takeConsumerLocked() -> (CheckedContinuation<LoadEvent?, Never>, LoadEvent)? {
        guard let waiting = consumer, head < queue.count else { return nil }
        consumer = nil
        let event = popLocked()
        if let producer = takeProducerLocked() { producersToResume.append(producer) }
        return (waiting, event)
    }

    /// Producers woken by `takeConsumerLocked`, resumed after the lock is released.
    private nonisolated(unsafe) var producersToResume: [CheckedContinuation<Void, Never>] = []

    private func resumeWokenProducers() {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            defer { producersToResume.removeAll() }
            return producersToResume
        }
        for producer in woken { producer.resume() }
    }

    /// The producer resumes once the queue has drained to half the backlog.
    private func takeProducerLocked() -> CheckedContinuation<Void, Never>? {
        guard let waiting = producer, queue.count - head <= backlog / 2 else { return nil }
        producer = nil
        return waiting
    }
}
