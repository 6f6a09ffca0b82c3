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
