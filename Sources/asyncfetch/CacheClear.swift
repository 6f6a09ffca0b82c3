import ArgumentParser
import DiskCache
import enum Loader.CacheReportLine

extension CacheCommand {
    /// `cache clear`: every entry goes; foreign files stay.
    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove every entry (files that are not the cache's own are kept).",
            discussion: "Temporary files of downloads still running in other processes are kept too.")
        @OptionGroup var cache: CacheOptions

        func run() throws {
            let store = try cache.openStore(writable: true)
            let report: DiskCacheStore.PruneReport
            do {
                report = try store.clear()
            } catch {
                throw RuntimeFailure(error.message)
            }
            print(CacheReportLine.cleared(report, directory: store.directory))
            try CacheCommand.finish(failures: report.failures + report.sweep.failures)
        }
    }
}
