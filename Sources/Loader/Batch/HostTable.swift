/// The scheduler's hosts: every held `HostState` in one array, found by its
/// key through an index. A scan over all hosts (`HostScheduler`'s
/// `activity`) reads the states' fields in place, by position: iterating a
/// dictionary of states copied each one (its queue's storage, its key's
/// strings, its failure: a retain and a release per reference, per host,
/// per scheduler event), which with 4,096 URLs read ahead over 10,000
/// hosts was a quarter of the run's CPU.
///
/// Every change of a state goes through here, which keeps two summaries up
/// to date: the hosts that could start a transfer now (`HostCandidates`:
/// `best` is the next one, with no scan) and the keys of the hosts with a
/// pause set (`paused`, few: what `HostScheduler` looks at when pauses end).
///
/// Positions change when a state is dropped (the last one takes its place),
/// so they are valid only until the next `subscript` set.
struct HostTable<Item> {
    /// The states, in no particular order; `keys[i]` is the key of `states[i]`.
    private(set) var states: [HostState<Item>] = []
    private(set) var keys: [HostKey] = []
    private var positions: [HostKey: Int] = [:]
    private let policy: HostPolicy
    /// The held hosts that are not paused and could start an item now.
    private var candidates = HostCandidates()
    /// Keys of the held hosts with a pause set (`pausedUntil`), ended or not.
    private(set) var paused: Set<HostKey> = []

    init(policy: HostPolicy) {
        self.policy = policy
    }

    var count: Int { states.count }

    func position(of key: HostKey) -> Int? { positions[key] }

    /// The position of the host to start next on the scheduler's `turn` (`HostPolicy.prefers`).
    func best(turn: Int) -> Int? { candidates.best(turn: turn) }

    /// A copy of `key`'s state, if it is held; setting nil drops it.
    subscript(key: HostKey) -> HostState<Item>? {
        get { positions[key].map { states[$0] } }
        set {
            switch (positions[key], newValue) {
            case (let position?, let state?):
                let wasPaused = states[position].pausedUntil != nil
                states[position] = state
                changed(at: position, wasPaused: wasPaused)
            case (nil, let state?):
                positions[key] = states.count
                states.append(state)
                keys.append(key)
                changed(at: states.count - 1, wasPaused: false)
            case (let position?, nil):
                remove(at: position)
            case (nil, nil):
                break
            }
        }
    }

    /// Reads `key`'s state in place, if it is held.
    func read<T>(_ key: HostKey, _ body: (HostState<Item>) -> T) -> T? {
        positions[key].map { body(states[$0]) }
    }

    /// Changes the state at `position` in place: a copy would share its
    /// queue's storage, and changing the queue would then copy it whole.
    mutating func modify<T>(at position: Int, _ body: (inout HostState<Item>) -> T) -> T {
        let wasPaused = states[position].pausedUntil != nil
        defer { changed(at: position, wasPaused: wasPaused) }
        return body(&states[position])
    }

    /// Brings the summaries up to date with the state at `position`.
    private mutating func changed(at position: Int, wasPaused: Bool) {
        let isPaused = states[position].pausedUntil != nil
        candidates.set(position, isPaused ? nil : states[position].candidate(policy))
        if isPaused != wasPaused {
            if isPaused { paused.insert(keys[position]) } else { paused.remove(keys[position]) }
        }
    }

    /// Drops the state at `position` (positions change: see above).
    mutating func remove(at position: Int) {
        if states[position].pausedUntil != nil { paused.remove(keys[position]) }
        positions[keys[position]] = nil
        let last = states.count - 1
        if position != last {
            states.swapAt(position, last)
            keys.swapAt(position, last)
            positions[keys[position]] = position
        }
        states.removeLast()
        keys.removeLast()
        candidates.set(last, nil)
        if position != last {
            candidates.set(position, states[position].pausedUntil != nil ? nil : states[position].candidate(policy))
        }
    }
}

extension HostTable: Sendable where Item: Sendable {}
