import ArgumentParser
import DiskCache
import enum Loader.CacheReportLine

extension CacheCommand {
    /// `cache stats [--json]`: totals.
    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show how many entries the cache holds and how much space its files take.",
            discussion: """
                bytes counts every file of the cache's own (bodies, metadata, temporary \
                files, kept partial bodies); --max-size of 'cache prune' bounds the same \
                number. --json prints one object: entries, bytes, dir, broken, \
                temporaryFiles, partialFiles.
                """)
        @OptionGroup var cache: CacheOptions

        @Flag(help: "Print one JSON object.")
        var json = false

        func run() throws {
            let (store, directory) = try cache.openStoreIfPresent()
            let scan = try store.map(CacheCommand.scan) ?? DiskCacheStore.Scan()   // no directory: no entries
            if json {
                print(CacheReportLine.statsJSON(scan, directory: directory))
            } else {
                for line in CacheReportLine.stats(scan, directory: directory) { print(line) }
            }
        }
    }
}
