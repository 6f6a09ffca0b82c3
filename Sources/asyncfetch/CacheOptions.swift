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

    func resolvedDirectory() throws -> String {
        do {
            return try CacheDirectory.resolve(explicit: cacheDir)
        } catch {
            throw UsageError(environment: error.message)
        }
    }
}

/// A usage problem found after parsing: exit 2 with a one-line reason.
/// A mistake on the command line adds a pointer to `--help`; a problem with
/// the machine (a cache directory or a file that cannot be used, a
/// permission) does not, since the help would not fix it (`environment`).
struct UsageError: Error, CustomStringConvertible {
    let description: String
    let pointsAtHelp: Bool
    init(_ message: String) { description = message; pointsAtHelp = true }
    init(environment message: String) { description = message; pointsAtHelp = false }
    /// A message that names the help to read itself.
    init(namingHelp message: String) { description = message; pointsAtHelp = false }

    /// A fetch run, `cache path`, `rm` or `pull` without a URL.
    static var noURLGiven: UsageError { UsageError("no URL given (name URLs as arguments, or a list with --input FILE)") }
}
