import Loader
import RemoteCache

/// Totals over a run, printed last (SPEC §3).
struct Summary {
    var total = 0
    var success = 0
    var failure = 0
    var empty = 0
    var cache = 0
    var network = 0
    var revalidated = 0
    var stale = 0
    var remote = 0
    var bytes: Int64 = 0
    /// What the remote cache tier did, when there is one (`--remote-cache`).
    var remoteTier: RemoteCache.Stats?
    /// What the host scheduler saw (hosts, paused, given up).
    var hosts: HostCounts?

    mutating func count(_ phase: Phase) {
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

    /// SPEC §3: 0 when every URL succeeded, 1 otherwise.
    var exitCode: Int32 { failure == 0 && empty == 0 ? 0 : 1 }
}
