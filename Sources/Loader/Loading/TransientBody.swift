import Support
#if canImport(Glibc)
import Glibc
#endif

/// The body of a `no-store` response, kept in the cache's temporary
/// directory only until every caller that shares the load has delivered it
/// (see `Delivery`). Each holder calls `release()` once; the last one
/// removes the file, so it is gone before that caller's `load` returns.
/// `deinit` removes it too, for holders that never got to release.
final class TransientBody: Sendable {
    let path: String
    private let holders = Locked(1)

    init(path: String) { self.path = path }

    /// ENOENT once a holder removed it; nothing else can fail that a caller could act on.
    deinit { unlink(path) }

    /// Sets how many callers will `release()` (0 removes the file now).
    func share(among count: Int) {
        let last = holders.withLock { holders -> Bool in holders = count; return count <= 0 }
        if last { unlink(path) }
    }

    func release() {
        let last = holders.withLock { holders -> Bool in holders -= 1; return holders == 0 }
        if last { unlink(path) }
    }
}
