import ArgumentParser
import DiskCache
import enum Loader.CacheReportLine

extension CacheCommand {
    /// `cache prune --max-size SIZE --max-age DURATION`: LRU eviction.
    struct Prune: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Evict least recently used entries first.",
            discussion: """
                Removes every entry not used for longer than --max-age, then more, least \
                recently used first, until the cache's files take at most --max-size. \
                Broken entries and leftovers of killed runs go first. A use is a hit or a \
                download (recorded to the minute). Entries this user may not read are kept \
                and counted, and the exit status is then 1 (cache verify names them). --json prints \
                one line, {"summary":{...}} with removed, removedBytes, partials, partialBytes, remaining, \
                remainingBytes, unreadable, swept, sweptBytes, temporaryKept and failures.
                """)
        @OptionGroup var cache: CacheOptions

        @Option(name: .customLong("max-size"), parsing: .unconditional, help: ArgumentHelp(
            "Largest total size to keep (bytes, or K/M/G). (default: no size limit)", valueName: "size"))
        var maxSize: SizeValue?

        @Option(name: .customLong("max-age"), parsing: .unconditional, help: ArgumentHelp(
            "Remove entries not used for longer than this. (default: no age limit)", valueName: "duration"))
        var maxAge: DurationValue?

        @Flag(help: "Print one JSON object: {\"summary\":{...}}.")
        var json = false

        func run() throws {
            // Checked here, not in `validate()`, which runs before an unknown option is reported.
            if maxSize == nil && maxAge == nil { throw UsageError("give --max-size, --max-age or both") }
            let store = try cache.openStoreIfPresent(writable: true).store
            var report = DiskCacheStore.PruneReport()   // no directory: nothing to evict
            do {
                if let store { report = try store.prune(maxBytes: maxSize?.bytes, maxAge: maxAge?.seconds) }
            } catch {
                throw RuntimeFailure(error.message)
            }
            print(json ? CacheReportLine.prunedJSON(report) : CacheReportLine.pruned(report))
            try CacheCommand.finish(failures: report.failures + report.sweep.failures)
            if report.unreadable > 0 { throw ExitCode(1) }   // as `verify`: entries it could not judge remain
        }
    }
}
