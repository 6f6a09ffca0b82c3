import ArgumentParser
import DiskCache
import enum Support.HumanUnits
#if canImport(Glibc)
import Glibc
#endif

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

    static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    /// "2026-11-22T00:11:33Z" (RFC 3339, UTC).
    static func isoTimestamp(_ seconds: Double) -> String {
        let (date, time) = utcParts(seconds)
        return date + "T" + time + "Z"
    }

    /// "2026-11-22 00:11:33" (UTC).
    static func humanTimestamp(_ seconds: Double) -> String {
        let (date, time) = utcParts(seconds)
        return date + " " + time
    }

    private static func utcParts(_ seconds: Double) -> (String, String) {
        guard seconds.isFinite, seconds.magnitude < 1e13 else { return ("????-??-??", "??:??:??") }
        var t = time_t(seconds.rounded(.down))
        var parts = tm()
        guard gmtime_r(&t, &parts) != nil else { return ("????-??-??", "??:??:??") }
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return ("\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))",
                "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))")
    }
}
