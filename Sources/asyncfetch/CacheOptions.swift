import ArgumentParser
import DiskCache
#if canImport(Glibc)
import Glibc
#endif

/// `--cache-dir`, shared by every command (SPEC §7).
struct CacheOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: ArgumentHelp(
        "Cache directory (default: $ASYNCFETCH_CACHE_DIR, else $XDG_CACHE_HOME/asyncfetch, else ~/.cache/asyncfetch).",
        valueName: "dir"))
    var cacheDir: String?

    /// The resolved directory, created with mode 0700. A directory that
    /// cannot be resolved, created or written is a usage error (exit 2).
    func openStore() throws -> DiskCacheStore {
        do {
            let directory = try CacheDirectory.resolve(explicit: cacheDir, environment: processEnvironment())
            return try DiskCacheStore(directory: directory)
        } catch {
            throw UsageError(error.message)
        }
    }

    func resolvedDirectory() throws -> String {
        do {
            return try CacheDirectory.resolve(explicit: cacheDir, environment: processEnvironment())
        } catch {
            throw UsageError(error.message)
        }
    }
}

/// A usage problem found after parsing (bad cache directory, unreadable
/// input file): exit 2 with a one-line reason and a hint.
struct UsageError: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// The process environment as a dictionary, read from `environ` (no Foundation:
/// linking it costs start-up time on every run).
func processEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var cursor = environ
    while let entry = cursor.pointee {
        let pair = String(cString: entry)
        if let equals = pair.firstIndex(of: "=") {
            result[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        cursor += 1
    }
    return result
}
