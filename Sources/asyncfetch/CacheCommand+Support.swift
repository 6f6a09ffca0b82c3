import ArgumentParser
import DiskCache
import enum Loader.Console
import enum Support.HumanUnits

/// Formatting and error handling shared by the `cache` subcommands.
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

    /// "; swept 3 leftover temporary files (1.2 MiB)", or "" when there were none.
    static func describe(_ sweep: DiskCacheStore.SweepReport) -> String {
        var text = ""
        if sweep.removed > 0 {
            text += "; swept \(sweep.removed) leftover temporary \(plural(sweep.removed, "file", "files")) (\(HumanUnits.bytes(sweep.removedBytes)))"
        }
        if sweep.kept > 0 {
            text += "; kept \(sweep.kept) temporary \(plural(sweep.kept, "file", "files")) still being written"
        }
        return text
    }

    static func plural(_ n: Int, _ one: String, _ many: String) -> String { n == 1 ? one : many }

    /// The string followed by spaces up to `length` characters (never cut):
    /// aligned columns in human output.
    static func padding(_ text: String, toLength length: Int) -> String {
        text.count >= length ? text : text + String(repeating: " ", count: length - text.count)
    }
}
