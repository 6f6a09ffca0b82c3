import DiskCache

/// The cache a run or a `cache` command works on, opened as the tool opens
/// it (SPEC §4, §7), its problems as `LoadError`s whose message is the
/// sentence to print: an empty `--cache-dir` (an unset shell variable) is a
/// slip of the command line (`usage`); a directory that cannot be resolved,
/// created, read or, with `writable`, written is the machine's (`io`, with
/// the `path`). Without `writable` a read-only cache opens: hits are served,
/// and each write that fails is that URL's `failure` of kind `io`.
public enum CacheOpening {
    /// The directory `explicit` (`--cache-dir`) or the environment names, not opened.
    public static func directory(explicit: String?) throws(LoadError) -> String {
        do {
            return try CacheDirectory.resolve(explicit: explicit)
        } catch {
            throw problem(error, explicit: explicit)
        }
    }

    /// The store, its directory created with mode 0700 when missing.
    public static func store(explicit: String?, writable: Bool = false) throws(LoadError) -> DiskCacheStore {
        do {
            let store = try DiskCacheStore(directory: try CacheDirectory.resolve(explicit: explicit))
            if writable { try CacheDirectory.checkWritable(store.directory) }
            return store
        } catch {
            throw problem(error, explicit: explicit)
        }
    }

    /// The store of a run. An `--offline` run only looks, so where the
    /// directory does not exist though it could be made it makes nothing
    /// and finds no entries (`DiskCacheStore(absentDirectory:)`), as
    /// `cache path` does; any other run makes the directory to store in.
    public static func runStore(explicit: String?, offline: Bool) throws(LoadError) -> DiskCacheStore {
        if offline {
            let directory = try directory(explicit: explicit)
            if CacheDirectory.isAbsent(directory) { return DiskCacheStore(absentDirectory: directory) }
        }
        return try store(explicit: explicit)
    }

    /// The store, or nil (with the directory it would be) when the directory
    /// does not exist though it could be made: the maintenance commands
    /// (`path`, `list`, `stats`, `verify`, `prune`, `rm`, `clear`) find no
    /// entries in a cache that is not there, so they do not create it (`dir`,
    /// a run and `cache pull`, which store entries, do). A directory that is
    /// there is checked as `store` checks it.
    public static func storeIfPresent(explicit: String?, writable: Bool = false) throws(LoadError)
        -> (store: DiskCacheStore?, directory: String) {
        let directory = try directory(explicit: explicit)
        if CacheDirectory.isAbsent(directory) { return (nil, directory) }
        let store = try store(explicit: explicit, writable: writable)
        return (store, store.directory)
    }

    private static func problem(_ error: DiskCacheError, explicit: String?) -> LoadError {
        LoadError(kind: explicit?.isEmpty == true ? .usage : .io, message: error.message, path: error.path.isEmpty ? nil : error.path)
    }
}
