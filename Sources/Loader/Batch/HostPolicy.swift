import Fetch

/// The scheduler's settings and its decisions, as pure functions of the
/// numbers they need: which host starts next and how many it may run, how
/// long a host that pushed back is paused, how its limit adapts, and when
/// it is given up on. `HostScheduler` keeps the state and applies them; nothing
/// here reads a clock or touches a socket.
public struct HostPolicy: Sendable, Equatable {
    /// Transfers at once over all hosts (`--jobs`).
    public var jobs: Int
    /// Transfers at once to one host (`--jobs-per-host`): its starting limit
    /// and the ceiling it grows back to.
    public var jobsPerHost: Int
    /// Connect failures (refused, or closed before an answer) or timeouts in
    /// a row after which a host is given up on.
    public var giveUpAfter: Int = Defaults.hostGiveUpAfter
    /// A pause without `Retry-After`: this many seconds, doubling with each
    /// pushback in a row.
    public var pauseBase: Double = Defaults.hostPauseBase
    /// The longest pause, `Retry-After` included.
    public var pauseMax: Double = Defaults.hostPauseMax
    /// Answers in a row after which a reduced limit grows by one.
    public var growAfter: Int = Defaults.hostGrowAfter
    /// Transfers at once to a host that has connected but not yet answered.
    public var unansweredLimit: Int = Defaults.hostUnansweredLimit
    /// A lane that is not a host to probe: the remote tier's reads
    /// (`ImageLoader.tierLane`), which `RemoteCache` watches itself (its
    /// failures never fail a URL). It starts known (no one-at-a-time
    /// start while a name resolves) with `laneLimit`, and is not counted
    /// as a host. Nil: none.
    public var lane: HostKey?
    /// Transfers at once in `lane` (`jobs` bounds it too); never below
    /// `jobsPerHost`, so it is never a reduced limit that grows back.
    public var laneLimit: Int {
        get { max(jobsPerHost, ownLaneLimit) }
        set { ownLaneLimit = newValue }
    }
    private var ownLaneLimit = 1

    public init(jobs: Int = Defaults.jobs, jobsPerHost: Int = Defaults.jobsPerHost) {
        self.jobs = max(1, jobs)
        self.jobsPerHost = max(1, jobsPerHost)
    }

    // MARK: Pick next

    /// A host that could start a transfer now: it has queued work, is not
    /// paused or given up, and is below its limit.
    public struct Candidate: Sendable, Equatable {
        public var queued: Int
        public var running: Int
        /// When it last started a transfer (or was first seen): smaller is longer ago.
        public var served: UInt64

        public init(queued: Int, running: Int, served: UInt64) {
            self.queued = queued
            self.running = running
            self.served = served
        }
    }

    /// Whether `c` starts before `b` on the scheduler's `turn` (it counts
    /// starts). Even turns go to the host with the most queued work per
    /// running transfer: the largest host bounds the batch's wall time, so
    /// its slots fill from the start. Odd turns go to the host served
    /// longest ago (round robin): whatever `jobs` is, no host waits for a
    /// large one to drain. Ties go to the host served longest ago. A total
    /// order (`served` is unique to each host): `HostCandidates` keeps the
    /// first of all candidates by it.
    public static func prefers(_ c: Candidate, over b: Candidate, turn: Int) -> Bool {
        guard turn % 2 == 0 else { return c.served < b.served }
        // c.queued / (c.running + 1) against b's, without division.
        let lhs = c.queued * (b.running + 1), rhs = b.queued * (c.running + 1)
        return lhs > rhs || (lhs == rhs && c.served < b.served)
    }

    /// Transfers `host` may run at once now: one until its first connection
    /// is made or refused (a name that does not resolve costs one lookup;
    /// over https the TCP connection counts, before its TLS handshake); then
    /// at most `unansweredLimit` until its first answer (a host that
    /// accepts connections and never answers holds no more slots while its
    /// first timeouts run, and those few start together, so that they give
    /// it up after one timeout, not one after another: over https they wait
    /// to share the first connection, and fail with it); then its
    /// adaptive `limit`.
    public func startLimit(limit: Int, resolved: Bool, answered: Bool) -> Int {
        guard resolved else { return 1 }
        return answered ? limit : min(limit, max(1, unansweredLimit))
    }

    // MARK: Pause

    /// Seconds a host that answered 429 or 503 is paused: its `Retry-After`
    /// when given, else `pauseBase` doubled for each earlier pushback in a
    /// row; never more than `pauseMax`.
    public func pauseSeconds(retryAfter: Double?, pushbacksInARow: Int) -> Double {
        if let retryAfter { return min(max(0, retryAfter), pauseMax) }
        let doublings = min(max(0, pushbacksInARow - 1), 30)
        return min(pauseMax, pauseBase * Double(1 << doublings))
    }

    /// Whether an answer with `status` asks its whole host to back off
    /// (SPEC §6): 429 Too Many Requests or 503 Service Unavailable. The one
    /// rule for the gate that hears the status line (it opens no slots) and
    /// for the outcome that pauses the host.
    public static func isPushback(status: Int) -> Bool {
        status == 429 || status == 503
    }

    // MARK: Adapt

    /// The limit after a pushback: halved (at least 1) on a 429, which says
    /// "too many"; a 503 says "not now" and only pauses.
    public func limit(_ limit: Int, afterPushback status: Int) -> Int {
        status == 429 ? max(1, limit / 2) : limit
    }

    /// The limit after an answer that was not a pushback, the `answersInARow`-th
    /// in a row: one more after every `growAfter`, up to `jobsPerHost`.
    public func limit(_ limit: Int, afterAnswers answersInARow: Int) -> Int {
        guard limit < jobsPerHost, answersInARow > 0, answersInARow % max(1, growAfter) == 0 else { return limit }
        return limit + 1
    }

    // MARK: Give up

    /// Whether a host with this many connect failures or timeouts in a row
    /// is given up on for the rest of the run.
    public func givesUp(failuresInARow: Int) -> Bool { failuresInARow >= max(1, giveUpAfter) }

    /// Why a host's URLs fail without being tried, after `timeouts` timeouts,
    /// `refusals` refused connections and `closes` connections closed before
    /// an answer in a row (both connect failures); the kind they report is
    /// that of the failure that decided it (`last`). `proxy`: the proxy the
    /// deciding failure was (`FetchError.proxy`): the host itself was never reached.
    public static func giveUp(host: HostKey, timeouts: Int, refusals: Int, closes: Int = 0,
                              last: HostFailure.Kind, proxy: String? = nil) -> HostFailure {
        let connects = refusals + closes
        let what = connects == 0 ? "gave \(timeouts) timeouts in a row"
            : timeouts == 0 && refusals == 0 ? "closed \(closes) connections in a row before answering"
            : timeouts == 0 ? "gave \(connects) connect failures in a row"
            : "gave \(timeouts + connects) connect failures or timeouts in a row"
        let through = proxy.map { " through the proxy \($0)" } ?? ""
        return HostFailure(kind: last, message: "host \(host.name) \(what)\(through); not tried again in this run", proxy: proxy)
    }

    /// Why a name that did not resolve fails its URLs without a second
    /// lookup; with `proxy`, it was the proxy's name that did not resolve.
    public static func unresolved(host: HostKey, proxy: String? = nil) -> HostFailure {
        guard let proxy else {
            return HostFailure(kind: .dns, message: "host \(host.name) did not resolve; not tried again in this run")
        }
        return HostFailure(kind: .dns, message: "the proxy \(proxy) did not resolve; host \(host.name) not tried again in this run",
                           proxy: proxy)
    }
}
