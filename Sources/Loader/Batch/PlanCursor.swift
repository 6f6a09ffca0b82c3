import Synchronization

/// The next block of a chunk's URLs to look up, shared by the tasks that
/// look the chunk up (`ImageLoader.planChunk`): each takes `block` URLs at a
/// time until none is left, so that they end within a block of each other
/// however unevenly their threads are free.
final class PlanCursor: Sendable {
    /// Some URLs of the chunk, looked up: those from `start` on.
    struct Block: Sendable {
        let start: Int
        var planned: [PlannedURL]
    }

    private let count: Int
    private let block: Int
    private let next = Atomic<Int>(0)

    init(count: Int, block: Int) {
        self.count = count
        self.block = max(1, block)
    }

    /// The indices of the next block, or nil when every URL is taken.
    func take() -> Range<Int>? {
        let start = next.add(block, ordering: .relaxed).oldValue
        guard start < count else { return nil }
        return start..<min(start + block, count)
    }

    /// Two tasks' blocks (each in the order it took them: ascending) as one
    /// list of parts in input order. The arrays are moved, not copied.
    static func inInputOrder(_ first: [Block], _ second: [Block]) -> [[PlannedURL]] {
        var parts: [[PlannedURL]] = []
        parts.reserveCapacity(first.count + second.count)
        var first = first[...], second = second[...]
        while let a = first.first, let b = second.first {
            if a.start < b.start {
                parts.append(a.planned)
                first = first.dropFirst()
            } else {
                parts.append(b.planned)
                second = second.dropFirst()
            }
        }
        parts.append(contentsOf: first.lazy.map(\.planned))
        parts.append(contentsOf: second.lazy.map(\.planned))
        return parts
    }
}
