@testable import Loader
import Testing

/// The scheduler's tree of candidate hosts, against the rule it keeps
/// (`HostPolicy.prefers`) applied to every candidate by a plain scan.
@Suite struct HostCandidatesTests {
    /// The first candidate by a scan over all of them (what the scheduler did before the tree).
    static func scan(_ leaves: [HostPolicy.Candidate?], turn: Int) -> Int? {
        var best: Int?
        for (position, candidate) in leaves.enumerated() {
            guard let candidate else { continue }
            if let b = best, let current = leaves[b], !HostPolicy.prefers(candidate, over: current, turn: turn) { continue }
            best = position
        }
        return best
    }

    @Test func theTreeNamesTheCandidateAScanWouldAfterEveryChange() {
        var generator = SystemRandomNumberGenerator()
        var tree = HostCandidates()
        var leaves: [HostPolicy.Candidate?] = []
        var served: UInt64 = 0
        for step in 0..<5_000 {
            let position = Int.random(in: 0..<300, using: &generator)
            while leaves.count <= position { leaves.append(nil) }
            var candidate: HostPolicy.Candidate?
            if Int.random(in: 0..<4, using: &generator) > 0 {
                served += 1
                // Few distinct backlogs, so that ties (broken by `served`) are common.
                candidate = HostPolicy.Candidate(queued: Int.random(in: 1...6, using: &generator),
                                                 running: Int.random(in: 0...5, using: &generator), served: served)
            }
            leaves[position] = candidate
            tree.set(position, candidate)
            for turn in 0..<2 {
                let expected = Self.scan(leaves, turn: turn)
                #expect(tree.best(turn: turn) == expected, "step \(step), turn \(turn)")
                if tree.best(turn: turn) != expected { return }
            }
        }
    }

    @Test func anEmptyTreeAndOneWhoseCandidatesAllLeftNameNone() {
        var tree = HostCandidates()
        #expect(tree.best(turn: 0) == nil)
        tree.set(5, HostPolicy.Candidate(queued: 1, running: 0, served: 1))
        #expect(tree.best(turn: 0) == 5 && tree.best(turn: 1) == 5)
        tree.set(5, nil)
        #expect(tree.best(turn: 0) == nil && tree.best(turn: 1) == nil)
    }
}
