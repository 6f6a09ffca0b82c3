import ArgumentParser
import DiskCache
import enum Loader.Console

/// Error handling shared by the `cache` subcommands (their lines are
/// `Loader`'s `CacheEntryLine`, `CacheReportLine` and `CacheURLLine`).
extension CacheCommand {
    static func scan(_ store: DiskCacheStore) throws -> DiskCacheStore.Scan {
        do {
            return try store.scan()
        } catch {
            throw RuntimeFailure(error.message)
        }
    }

    /// Prints each failure on stderr; exit 1 if there were any.
    static func finish(failures: [DiskCacheError]) throws {
        guard !failures.isEmpty else { return }
        for failure in failures { Console.error("asyncfetch: \(failure.message)") }
        throw ExitCode(1)
    }
}
