import Support
import Testing

@Suite struct FIFOTests {
    @Test func firstInFirstOut() {
        var queue = FIFO<Int>()
        #expect(queue.isEmpty && queue.popFirst() == nil)
        for n in 1...5 { queue.append(n) }
        #expect(queue.count == 5)
        #expect(queue.popFirst() == 1)
        #expect(queue.popFirst(leaving: 0) == 2)
        #expect(Array(queue.elements) == [3, 4, 5])
        queue.append(6)
        #expect(queue.popFirst(upTo: 2) == [3, 4])
        #expect(queue.popFirst(upTo: 10) == [5, 6])
        #expect(queue.isEmpty && queue.popFirst(upTo: 3) == [])
    }

    @Test func appendingAnArrayTakesItWholeOnlyWhenEmpty() {
        var queue = FIFO<String>()
        var run = ["a", "b"]
        queue.append(contentsOf: &run)
        #expect(run.isEmpty)   // swapped: the queue's old, empty storage
        var more = ["c"]
        queue.append(contentsOf: &more)
        #expect(more == ["c"])   // copied: the caller clears it
        #expect(queue.popFirst(upTo: 3) == ["a", "b", "c"])
    }

    @Test func removesFromAnywhere() {
        var queue = FIFO<Int>()
        for n in 1...4 { queue.append(n) }
        #expect(queue.popFirst() == 1)
        #expect(queue.remove(firstWhere: { $0 == 3 }) == 3)
        #expect(queue.remove(firstWhere: { $0 == 2 }) == 2)
        #expect(queue.remove(firstWhere: { $0 == 1 }) == nil)   // already taken
        #expect(Array(queue.elements) == [4])
        queue.removeAll()
        #expect(queue.isEmpty && queue.count == 0)
    }

    /// Order survives the compaction of taken slots, however the queue grows and drains.
    @Test func orderSurvivesCompaction() {
        var queue = FIFO<Int>()
        var next = 0
        var expected = 0
        for round in 0..<50 {
            for _ in 0..<(round % 7 + 1) * 100 {
                queue.append(next)
                next += 1
            }
            for _ in 0..<(round % 5 + 1) * 90 {
                guard let value = queue.popFirst() else { break }
                #expect(value == expected)
                expected += 1
            }
        }
        while let value = queue.popFirst() {
            #expect(value == expected)
            expected += 1
        }
        #expect(expected == next)
    }

    /// A moved-out element leaves no reference behind in the queue.
    @Test func poppingWithAPlaceholderReleasesTheElement() {
        final class Box {}
        var queue = FIFO<Box?>()
        weak var weakBox: Box?
        do {
            let box = Box()
            weakBox = box
            queue.append(box)
            queue.append(nil)
            _ = queue.popFirst(leaving: nil)
        }
        #expect(weakBox == nil)
        #expect(queue.count == 1)
    }
}
