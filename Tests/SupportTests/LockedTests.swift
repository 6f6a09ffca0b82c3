import Support
import Testing

@Suite struct LockedTests {
    @Test func concurrentIncrementsAreNotLost() async {
        let counter = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<10_000 { counter.withLock { $0 += 1 } } }
            }
        }
        #expect(counter.withLock { $0 } == 80_000)
    }

    @Test func throwsThroughAndReleases() {
        struct Boom: Error {}
        let box = Locked([1])
        #expect(throws: Boom.self) { try box.withLock { _ throws(Boom) in throw Boom() } }
        // The lock was released: taking it again does not dead-lock.
        #expect(box.withLock { $0.count } == 1)
        #expect(box.acquireForever(within: 0.05))
        #expect(!box.acquireForever(within: 0.05))
    }

    @Test func clocksMove() {
        let start = monotonicSeconds()
        let wall = currentUnixTime()
        #expect(wall > 1_700_000_000)
        #expect(monotonicSeconds() >= start)
    }
}

@Suite struct LockConditionTests {
    /// A producer that waits for room is woken by the consumer's `signal`, and nothing is lost.
    @Test func waitsUntilReady() async {
        let queue = Locked(FIFO<Int>())
        let room = LockCondition()
        let total = 2_000
        let producer = Task.detached {
            for n in 0..<total {
                queue.withLock(when: room, { $0.count < 4 }) { $0.append(n) }
            }
        }
        var received: [Int] = []
        while received.count < total {
            let taken = queue.withLock { queue -> [Int] in
                let taken = queue.popFirst(upTo: 3)
                if !taken.isEmpty { room.signal() }
                return taken
            }
            #expect(queue.withLock { $0.count } <= 4)
            received += taken
            if taken.isEmpty { await Task.yield() }
        }
        await producer.value
        #expect(received == Array(0..<total))
    }

    @Test func lastBodyRunsWhenTaken() {
        let box = Locked(1)
        #expect(box.acquireForever(within: 0.05) { $0 += 1 })
        var ran = false
        #expect(!box.acquireForever(within: 0.05) { _ in ran = true })
        #expect(!ran)
    }
}

@Suite struct WakeSemaphoreTests {
    /// A post that comes before the wait is kept: the wait returns at once.
    /// The wait runs on a thread of its own, so a lost post fails the test
    /// after 10 s instead of hanging it; a second post then frees that thread.
    @Test func postBeforeWaitIsKept() async throws {
        let wake = WakeSemaphore()
        let returned = Locked(false)
        wake.post()
        try startDetachedThread(name: "sem-test") {
            wake.wait()
            returned.withLock { $0 = true }
        }
        let deadline = monotonicSeconds() + 10
        while !returned.withLock({ $0 }) && monotonicSeconds() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(returned.withLock { $0 }, "the wait did not return: the post before it was lost")
        if !returned.withLock({ $0 }) { wake.post() }
    }

    /// A thread that notes it sleeps and waits is woken by each post, and
    /// every item handed over that way is taken exactly once, in order.
    @Test func sleeperIsWokenForEveryHandOff() async throws {
        struct Shared { var queue: [Int] = []; var sleeping = false; var done = false }
        let shared = Locked(Shared())
        let wake = WakeSemaphore()
        let received = Locked([Int]())
        let finished = Locked(false)
        try startDetachedThread(name: "sem-test") {
            while true {
                let taken = shared.withLock { shared -> [Int]? in
                    if shared.queue.isEmpty && !shared.done { shared.sleeping = true; return nil }
                    defer { shared.queue.removeAll() }
                    return shared.queue
                }
                guard let taken else { wake.wait(); continue }
                received.withLock { $0 += taken }
                if taken.isEmpty { break }
            }
            finished.withLock { $0 = true }
        }
        let total = 5_000
        for n in 0..<total {
            let wakes = shared.withLock { shared -> Bool in
                shared.queue.append(n)
                defer { shared.sleeping = false }
                return shared.sleeping
            }
            if wakes { wake.post() }
            if n % 97 == 0 { await Task.yield() }
        }
        let wakes = shared.withLock { shared -> Bool in
            shared.done = true
            defer { shared.sleeping = false }
            return shared.sleeping
        }
        if wakes { wake.post() }
        let deadline = monotonicSeconds() + 10
        while !finished.withLock({ $0 }) && monotonicSeconds() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(finished.withLock { $0 })
        #expect(received.withLock { $0 } == Array(0..<total))
    }
}
