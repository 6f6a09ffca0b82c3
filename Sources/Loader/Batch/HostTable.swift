/// The scheduler's hosts: every held `HostState` in one array, found by its
/// key through an index. A scan over all hosts (`HostScheduler`'s `fill`,
/// `nextWake`, `activity`) reads the states' fields in place, by position:
/// iterating a dictionary of states copied each one (its queue's storage,
/// its key's strings, its failure: a retain and a release per reference,
/// per host, per scheduler event), which with 4,096 URLs read ahead over
/// 10,000 hosts was a quarter of the run's CPU.
///
/// Positions change when a state is dropped (the last one takes its place),
/// so they are valid only until the next `subscript` set.
struct HostTable<Item> {
    /// The states, in no particular order; `keys[i]` is the key of `states[i]`.
    private(set) var states: [HostState<Item>] = []
    private(set) var keys: [HostKey] = []
    private var positions: [HostKey: Int] = [:]

    var count: Int { states.count }

    func position(of key: HostKey) -> Int? { positions[key] }

    /// A copy of `key`'s state, if it is held; setting nil drops it.
    subscript(key: HostKey) -> HostState<Item>? {
        get { positions[key].map { states[$0] } }
        set {
            switch (positions[key], newValue) {
            case (let position?, let state?):
                states[position] = state
            case (nil, let state?):
                positions[key] = states.count
                states.append(state)
                keys.append(key)
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
        body(&states[position])
    }

    private mutating func remove(at position: Int) {
        positions[keys[position]] = nil
        let last = states.count - 1
        if position != last {
            states.swapAt(position, last)
            keys.swapAt(position, last)
            positions[keys[position]] = position
        }
        states.removeLast()
        keys.removeLast()
    }
}

extension HostTable: Sendable where Item: Sendable {}
