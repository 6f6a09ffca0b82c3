/// The hosts that could start a transfer now, kept as a tournament tree over
/// `HostTable` positions, so that `HostScheduler` finds the next host in
/// O(1) and updates one host in O(log hosts). The old way, a scan of every
/// held host per slot that freed, read thousands of host states per URL with
/// 4,096 URLs read ahead over 10,000 hosts (8 % of the run's CPU).
///
/// Each inner node holds the winner of its two children for each of
/// `HostPolicy.prefers`'s two orders (most queued work per running
/// transfer, and served longest ago): both are total orders (ties go to
/// the smaller `served`, which is unique), so the root is the first of all
/// candidates whatever order they were set in.
struct HostCandidates {
    /// `leaves[i]`: the candidate at position i, nil when it cannot start now.
    private var leaves: [HostPolicy.Candidate?] = []
    /// Heap-ordered inner nodes (root at 1, children of n at 2n and 2n+1,
    /// leaf i at `capacity + i`): the winning position, or -1 for none.
    private var byBacklog: [Int32] = [-1, -1]
    private var byServed: [Int32] = [-1, -1]
    private var capacity = 1

    /// The position of the candidate to start next on the scheduler's `turn`, if any.
    func best(turn: Int) -> Int? {
        let winner = turn % 2 == 0 ? byBacklog[1] : byServed[1]
        return winner < 0 ? nil : Int(winner)
    }

    /// Sets what position `position` can do now (nil: it cannot start).
    mutating func set(_ position: Int, _ candidate: HostPolicy.Candidate?) {
        if position >= capacity {
            if candidate == nil && position >= leaves.count { return }
            grow(toHold: position + 1)
        }
        while leaves.count <= position { leaves.append(nil) }
        leaves[position] = candidate
        var node = capacity + position
        let leaf: Int32 = candidate == nil ? -1 : Int32(position)
        byBacklog[node] = leaf
        byServed[node] = leaf
        node /= 2
        while node >= 1 {
            byBacklog[node] = winner(byBacklog[2 * node], byBacklog[2 * node + 1], turn: 0)
            byServed[node] = winner(byServed[2 * node], byServed[2 * node + 1], turn: 1)
            node /= 2
        }
    }

    private func winner(_ a: Int32, _ b: Int32, turn: Int) -> Int32 {
        guard a >= 0, let ca = leaves[Int(a)] else { return b }
        guard b >= 0, let cb = leaves[Int(b)] else { return a }
        return HostPolicy.prefers(cb, over: ca, turn: turn) ? b : a
    }

    /// Doubles the tree until `count` positions fit, and rebuilds it.
    private mutating func grow(toHold count: Int) {
        while capacity < count { capacity *= 2 }
        byBacklog = Array(repeating: -1, count: 2 * capacity)
        byServed = Array(repeating: -1, count: 2 * capacity)
        for (position, candidate) in leaves.enumerated() where candidate != nil {
            byBacklog[capacity + position] = Int32(position)
            byServed[capacity + position] = Int32(position)
        }
        for node in stride(from: capacity - 1, through: 1, by: -1) {
            byBacklog[node] = winner(byBacklog[2 * node], byBacklog[2 * node + 1], turn: 0)
            byServed[node] = winner(byServed[2 * node], byServed[2 * node + 1], turn: 1)
        }
    }
}
