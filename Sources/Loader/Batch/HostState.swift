/// One host as the scheduler sees it: its queue (only what the input reader
/// has handed over), its transfers running, its limit, and the counts its
/// policy decisions read. A value type; `HostScheduler` owns every one.
struct HostState<Item> {
    /// Waiting items, oldest at `head` (popped by moving `head`, so a long
    /// queue is not shifted on every start).
    private var items: [Item?] = []
    private var head = 0
    private(set) var running = 0
    /// When the item now first in line became first (`start`'s `waited`).
    private var headSince = 0.0
    /// The adaptive limit: `jobsPerHost` at first, halved on a 429.
    var limit: Int
    /// A connection was made (over https: its TCP connection, before the
    /// handshake) or failed (anything but "did not resolve"):
    /// until then the host runs one transfer, so a name that does not
    /// resolve costs one lookup (`HostPolicy.startLimit`).
    var resolved = false
    /// The host answered in this run: a response, a pushback, or the start
    /// of one that then timed out.
    var answered = false
    /// No start before this time.
    var pausedUntil: Double?
    /// The status that set the pause (`pausedUntil`), until `-v` hears of
    /// it: only once a URL waits on it (`HostScheduler.announcePause`).
    var unannouncedPauseStatus: Int?
    /// The limit before a halving that waits for that pause's note (`HostScheduler.announceLimit`).
    var unannouncedLimitFrom: Int?
    var pushbacksInARow = 0
    var answersInARow = 0
    var timeoutsInARow = 0
    var refusalsInARow = 0
    /// Connections accepted and then closed or reset before an answer (connect failures too).
    var closesInARow = 0
    var givenUp: HostFailure?
    /// When it last started a transfer, or was first seen (round robin).
    var served: UInt64

    init(limit: Int, served: UInt64) {
        self.limit = limit
        self.served = served
    }

    var queued: Int { items.count - head }
    var failuresInARow: Int { timeoutsInARow + refusalsInARow + closesInARow }

    func isPaused(at now: Double) -> Bool { pausedUntil.map { now < $0 } ?? false }

    /// What `HostPolicy.prefers` weighs, if the host could start an item now:
    /// it has queued work, is not given up and is below its limit (a pause
    /// is the caller's to check).
    func candidate(_ policy: HostPolicy) -> HostPolicy.Candidate? {
        guard queued > 0, givenUp == nil, running < policy.startLimit(limit: limit, resolved: resolved, answered: answered) else { return nil }
        return HostPolicy.Candidate(queued: queued, running: running, served: served)
    }

    /// Nothing to remember: dropping the state loses nothing a later URL of
    /// the host would need (memory stays flat in the number of hosts).
    func isForgettable(ceiling: Int) -> Bool {
        queued == 0 && running == 0 && pausedUntil == nil && failuresInARow == 0 && pushbacksInARow == 0
            && limit == ceiling && givenUp == nil
    }

    mutating func append(_ item: Item, now: Double) {
        if queued == 0 { headSince = now }
        items.append(item)
    }

    /// Puts an item back at the front: it was started and is to go first again.
    mutating func prepend(_ item: Item, now: Double) {
        headSince = now
        if head > 0 {
            head -= 1
            items[head] = item
        } else {
            items.insert(item, at: 0)
        }
    }

    /// Takes the oldest item and counts it as running; with how long it was first in line.
    mutating func start(served order: UInt64, now: Double) -> (Item, Double)? {
        guard head < items.count, let item = items[head] else { return nil }
        let waited = max(0, now - headSince)
        headSince = now
        items[head] = nil
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 64)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        running += 1
        served = order
        return (item, waited)
    }

    mutating func finish() { running = max(0, running - 1) }

    /// The server answered (a response, or a pushback): its name resolves, and
    /// its streaks of connect failures and timeouts end.
    mutating func heardFrom() {
        resolved = true
        answered = true
        timeoutsInARow = 0
        refusalsInARow = 0
        closesInARow = 0
    }

    /// Empties the queue, oldest first.
    mutating func removeAll() -> [Item] {
        defer {
            items = []
            head = 0
        }
        return items[head...].compactMap { $0 }
    }
}
extension HostState: Sendable where Item: Sendable {}
