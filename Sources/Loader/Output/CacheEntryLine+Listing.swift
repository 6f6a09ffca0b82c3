import DiskCache
import HTTPCaching

extension CacheEntryLine {
    /// Every line of `cache list` for `scan` of the cache in `directory`, in
    /// order, each handed to `line` (a listing of millions of entries is
    /// never held as text): the intact entries sorted by URL, fresh or stale
    /// by `freshness` at `now`, then the broken ones, by key (`cache stats`
    /// counts them, so they are shown, not hidden); `json`: one object each.
    /// The type column is as wide as its longest value (capped), so the URLs line up.
    public static func listing(_ scan: DiskCacheStore.Scan, directory: String, freshness: Freshness, now: Double,
                               json: Bool, _ line: (String) -> Void) {
        let intact = scan.intact
        let typeWidth = typeWidth(intact)
        for entry in intact.sorted(by: { $0.metadata.url < $1.metadata.url }) {
            let fresh = freshness.isFresh(entry.metadata, now: now)
            line(json ? Self.json(entry, fresh: fresh) : human(entry, fresh: fresh, typeWidth: typeWidth))
        }
        for broken in scan.broken {
            let path = directory + "/" + broken.key
            line(json ? Self.json(broken: broken, path: path) : human(broken: broken, path: path, typeWidth: typeWidth))
        }
    }
}
