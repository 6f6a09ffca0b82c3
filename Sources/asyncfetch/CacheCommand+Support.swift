import ArgumentParser
import DiskCache
import enum Loader.Console

/// Error handling shared by the `cache` subcommands (their lines are
/// `Loader`'s `CacheEntryLine`, `CacheReportLine` and `CacheURLLine`).
extension CacheCommand {
    /// The names the subcommands are typed with (`rm`, not `remove`).
    static var names: [String] { configuration.subcommands.map { $0._commandName } }

    static func isCommand(_ name: String) -> Bool { names.contains(name) }

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
