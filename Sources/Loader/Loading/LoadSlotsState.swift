import Support

/// The rules of `LoadSlots`, as a value whose methods return what to do
/// (`SharedLoadState`'s shape). Generic in the waiter (a continuation in
/// use, any value in tests).
///
/// At most `jobs` loads hold a slot, at most `jobsPerHost` of them for one
/// host. A load whose host is full waits in its host's queue and holds no
/// slot, so other hosts go on; when a slot frees, the hosts with loads
/// waiting are served in turn, and a host's loads in the order they came.
/// Every ticket is answered exactly once: granted (`true`) by `wait` or a
/// later `release`, or refused (`false`) by `leave`; a ticket that leaves
/// before it waits is refused by its `wait`.
struct LoadSlotsState<Waiter> {
    enum Action {
        case nothing
        /// `true`: the waiter holds a slot now; `false`: it left first.
        case resume([(Waiter, Bool)])
    }

    fileprivate struct Host {
        var running = 0
        var waiting = FIFO<(id: UInt64, waiter: Waiter)>()
    }

    let jobs: Int
    let jobsPerHost: Int
    private var running = 0
    private var hosts: [HostKey: Host] = [:]
    /// Hosts with loads waiting, served in this order from `turn`.
    private var turns: [HostKey] = []
    private var turn = 0
    private var lastTicket: UInt64 = 0
    /// Tickets that left before they waited.
    private var left: Set<UInt64> = []
    /// The host each waiting ticket waits for.
    private var waitingFor: [UInt64: HostKey] = [:]

    init(jobs: Int, jobsPerHost: Int) {
        self.jobs = max(1, jobs)
        self.jobsPerHost = max(1, jobsPerHost)
    }

    /// Loads holding a slot, in all.
    var inUse: Int { running }

    /// Tickets waiting in a host's queue, in all.
    var waiting: Int { waitingFor.count }

    mutating func ticket() -> UInt64 {
        lastTicket += 1
        return lastTicket
    }

    /// `id` asks for a slot for `host`: granted at once when both limits
    /// allow and nobody of that host waits before it, else queued.
    mutating func wait(_ id: UInt64, host: HostKey, _ waiter: Waiter) -> Action {
        if left.remove(id) != nil { return .resume([(waiter, false)]) }
        var entry = hosts[host] ?? Host()
        if running < jobs, entry.running < jobsPerHost, entry.waiting.isEmpty {
            entry.running += 1
            running += 1
            hosts[host] = entry
            return .resume([(waiter, true)])
        }
        if entry.waiting.isEmpty { turns.append(host) }
        entry.waiting.append((id, waiter))
        hosts[host] = entry
        waitingFor[id] = host
        return .nothing
    }

    /// `id`'s task was cancelled: refused if it waits, remembered if it has
    /// not waited yet; nothing if it holds a slot (it gives it back with `release`).
    mutating func leave(_ id: UInt64) -> Action {
        guard id <= lastTicket else { return .nothing }
        guard let host = waitingFor.removeValue(forKey: id) else {
            left.insert(id)   // not waiting yet, or granted: `wait` or `release` settles it
            return .nothing
        }
        guard var entry = hosts[host], let found = entry.waiting.remove(firstWhere: { $0.id == id }) else { return .nothing }
        hosts[host] = entry
        if entry.waiting.isEmpty { dropTurn(of: host) }
        if entry.running == 0 && entry.waiting.isEmpty { hosts[host] = nil }
        return .resume([(found.waiter, false)])
    }

    /// A load of `host` that held a slot `id` ended: its slot goes to the
    /// next host in turn that has a load waiting and room for it.
    mutating func release(_ id: UInt64, host: HostKey) -> Action {
        left.remove(id)
        guard var entry = hosts[host], entry.running > 0 else { return .nothing }
        entry.running -= 1
        running -= 1
        hosts[host] = entry.running == 0 && entry.waiting.isEmpty ? nil : entry
        var granted: [(Waiter, Bool)] = []
        var passed = 0
        while running < jobs, !turns.isEmpty, passed < turns.count {
            if turn >= turns.count { turn = 0 }
            let candidate = turns[turn]
            guard var next = hosts[candidate], next.running < jobsPerHost, let first = next.waiting.popFirst() else {
                turn += 1
                passed += 1
                continue
            }
            next.running += 1
            running += 1
            hosts[candidate] = next
            waitingFor[first.id] = nil
            granted.append((first.waiter, true))
            passed = 0
            if next.waiting.isEmpty { turns.remove(at: turn) } else { turn += 1 }
        }
        return granted.isEmpty ? .nothing : .resume(granted)
    }

    private mutating func dropTurn(of host: HostKey) {
        guard let index = turns.firstIndex(of: host) else { return }
        turns.remove(at: index)
        if index < turn { turn -= 1 }
    }
}

extension LoadSlotsState: Sendable where Waiter: Sendable {}
extension LoadSlotsState.Host: Sendable where Waiter: Sendable {}
