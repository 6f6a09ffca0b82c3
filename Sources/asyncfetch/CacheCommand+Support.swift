import ArgumentParser
import DiskCache
import enum Loader.Console

/// Error handling and the column padding shared by the `cache` subcommands
/// (their lines are `Loader`'s `CacheEntryLine` and `CacheReportLine`).
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

    /// The string followed by spaces up to `length` characters (never cut):
    /// aligned columns in human output.
    static func padding(_ text: String, toLength length: Int) -> String {
        text.count >= length ? text : text + String(repeating: " ", count: length - text.count)
    }
}
