import RemoteCache

/// Totals over a batch's terminal phases: how many URLs ended in each
/// phase and came from each source, and the bytes delivered (the tool's
/// summary line, SPEC §3).
public struct BatchTotals: Sendable, Equatable {
    public var total = 0
    public var success = 0
    public var failure = 0
    public var empty = 0
    public var cache = 0
    public var network = 0
    public var revalidated = 0
    public var stale = 0
    public var remote = 0
    public var bytes: Int64 = 0
    /// What the remote cache tier did, when there is one (`BatchRun.Ending.remoteStats`).
    public var remoteTier: RemoteCache.Stats?
    /// What the host scheduler saw (`BatchRun.Ending.hosts`).
    public var hosts: HostCounts?

    public init() {}

    /// Counts one terminal phase (`loading` is not counted).
    public mutating func count(_ phase: Phase) {
        switch phase {
        case .loading: return
        case .empty: empty += 1
        case .failure: failure += 1
        case .success(let result):
            success += 1
            bytes += result.bytes
            switch result.source {
            case .cache: cache += 1
            case .network: network += 1
            case .revalidated: revalidated += 1
            case .stale: stale += 1
            case .remote: remote += 1
            }
        }
        total += 1
    }

    /// Every URL succeeded (SPEC §3: exit status 0, else 1).
    public var allSucceeded: Bool { failure == 0 && empty == 0 }
}
