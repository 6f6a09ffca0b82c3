import ArgumentParser
import DiskCache
import enum Loader.CacheOpening

/// `--cache-dir`, shared by every command (SPEC §7). Opening the cache is
/// Loader's `CacheOpening`; its problems are usage errors here (exit 2),
/// pointing at the help only for an empty `--cache-dir`.
struct CacheOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: ArgumentHelp(
        "Cache directory (default: $ASYNCFETCH_CACHE_DIR, else $XDG_CACHE_HOME/asyncfetch, else ~/.cache/asyncfetch).",
        valueName: "dir"), completion: .directory)
    var cacheDir: String?

    /// The store (`CacheOpening.store`), its directory created if missing.
    func openStore(writable: Bool = false) throws -> DiskCacheStore {
        do {
            return try CacheOpening.store(explicit: cacheDir, writable: writable)
        } catch {
            throw UsageError(error)
        }
    }

    /// The store of a run (`CacheOpening.runStore`): an `--offline` run makes no missing directory.
    static func openRunStore(cacheDir: String?, offline: Bool) throws -> DiskCacheStore {
        do {
            return try CacheOpening.runStore(explicit: cacheDir, offline: offline)
        } catch {
            throw UsageError(error)
        }
    }

    /// The store, or nil with its directory when there is none (`CacheOpening.storeIfPresent`).
    func openStoreIfPresent(writable: Bool = false) throws -> (store: DiskCacheStore?, directory: String) {
        do {
            return try CacheOpening.storeIfPresent(explicit: cacheDir, writable: writable)
        } catch {
            throw UsageError(error)
        }
    }
}
