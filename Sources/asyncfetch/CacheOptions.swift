import ArgumentParser
import DiskCache

/// `--cache-dir`, shared by every command (SPEC §7).
struct CacheOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: ArgumentHelp(
        "Cache directory (default: $ASYNCFETCH_CACHE_DIR, else $XDG_CACHE_HOME/asyncfetch, else ~/.cache/asyncfetch).",
        valueName: "dir"), completion: .directory)
    var cacheDir: String?

    /// The resolved directory, created with mode 0700. A directory that
    /// cannot be resolved, created or read — or, with `writable`, written —
    /// is a usage error (exit 2) naming the path. Without `writable` a
    /// read-only cache opens: hits are served, and each write that fails is
    /// that URL's `failure` of kind `io`, naming the path.
    func openStore(writable: Bool = false) throws -> DiskCacheStore {
        try Self.openStore(cacheDir: cacheDir, writable: writable)
    }

    static func openStore(cacheDir: String?, writable: Bool = false) throws -> DiskCacheStore {
        do {
            let store = try DiskCacheStore(directory: try CacheDirectory.resolve(explicit: cacheDir))
            if writable { try CacheDirectory.checkWritable(store.directory) }
            return store
        } catch {
            // An empty --cache-dir is a slip on the command line; anything else is the machine's.
            throw cacheDir?.isEmpty == true ? UsageError(error.message) : UsageError(environment: error.message)
        }
    }

    /// The store of a run. An `--offline` run only looks, so where the
    /// directory does not exist though it could be made it makes nothing
    /// and finds no entries (`DiskCacheStore(absentDirectory:)`), as
    /// `cache path` does; any other run makes the directory to store in.
    static func openRunStore(cacheDir: String?, offline: Bool) throws -> DiskCacheStore {
        if offline {
            let directory = try resolvedDirectory(cacheDir)
            if CacheDirectory.isAbsent(directory) { return DiskCacheStore(absentDirectory: directory) }
        }
        return try openStore(cacheDir: cacheDir)
    }

    /// The store, or nil (with the directory it would be) when the
    /// directory does not exist though it could be made: the maintenance
    /// commands (`path`, `list`, `stats`, `verify`, `prune`, `rm`, `clear`)
    /// find no entries in a cache that is not there, so they do not create
    /// it (`dir`, a run and `cache pull`, which store entries, do). A
    /// directory that is there is checked as `openStore` checks it.
    func openStoreIfPresent(writable: Bool = false) throws -> (store: DiskCacheStore?, directory: String) {
        let directory = try resolvedDirectory()
        if CacheDirectory.isAbsent(directory) { return (nil, directory) }
        let store = try openStore(writable: writable)
        return (store, store.directory)
    }

    func resolvedDirectory() throws -> String {
        try Self.resolvedDirectory(cacheDir)
    }

    static func resolvedDirectory(_ cacheDir: String?) throws -> String {
        do {
            return try CacheDirectory.resolve(explicit: cacheDir)
        } catch {
            throw cacheDir?.isEmpty == true ? UsageError(error.message) : UsageError(environment: error.message)
        }
    }
}
