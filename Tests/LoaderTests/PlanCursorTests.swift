import DiskCache
@testable import Loader
import Testing

/// The cursor two tasks share to look up a chunk: every URL is taken by
/// exactly one of them, and their blocks join back in input order.
@Suite struct PlanCursorTests {
    @Test(arguments: [1, 7, 8, 9, 128])
    func everyIndexIsTakenOnceAndTheBlocksJoinInInputOrder(count: Int) async {
        let cursor = PlanCursor(count: count, block: 8)
        @Sendable func takeAll() -> [PlanCursor.Block] {
            var blocks: [PlanCursor.Block] = []
            while let range = cursor.take() {
                let planned = range.map { PlannedURL(identity: MD5.digest("\($0)"), shown: "\($0)", plan: nil, duration: 0) }
                blocks.append(PlanCursor.Block(start: range.lowerBound, planned: planned))
            }
            return blocks
        }
        async let other = takeAll()
        let mine = takeAll()
        let parts = PlanCursor.inInputOrder(mine, await other)
        #expect(parts.flatMap { $0.map(\.shown) } == (0..<count).map { "\($0)" })
        #expect(parts.allSatisfy { $0.count <= 8 })
        #expect(cursor.take() == nil)
    }
}
