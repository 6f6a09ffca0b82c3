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
