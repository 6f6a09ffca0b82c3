import ArgumentParser
import DiskCache
import enum Loader.CacheReportLine

extension CacheCommand {
    /// `cache clear`: every entry goes; foreign files stay.
    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove every entry (files that are not the cache's own are kept).",
            discussion: """
                Temporary files of downloads still running in other processes are kept too. --json \
                prints one line, {"summary":{...}}: cache prune's fields and dir.
                """)
        @OptionGroup var cache: CacheOptions

        @Flag(help: "Print one JSON object: {\"summary\":{...}}.")
        var json = false

        func run() throws {
            let (store, directory) = try cache.openStoreIfPresent(writable: true)
            var report = DiskCacheStore.PruneReport()   // no directory: nothing to remove
            do {
                if let store { report = try store.clear() }
            } catch {
                throw RuntimeFailure(error.message)
            }
            print(json ? CacheReportLine.clearedJSON(report, directory: directory)
                       : CacheReportLine.cleared(report, directory: directory))
            try CacheCommand.finish(failures: report.failures + report.sweep.failures)
        }
    }
}
