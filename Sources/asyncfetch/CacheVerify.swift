import ArgumentParser
import DiskCache
import Support

extension CacheCommand {
    /// `cache verify`: reread every entry, remove the corrupt ones.
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every entry's body against its recorded length and MD5; remove corrupt entries.",
            discussion: """
                Also removes partial or foreign entries and leftovers of killed runs. Prints \
                one line per removed entry, then a summary. Exit status 1 if something \
                could not be removed.
                """)
        @OptionGroup var cache: CacheOptions

        func run() throws {
            let store = try cache.openStore(writable: true)
            let report: DiskCacheStore.VerifyReport
            do {
                report = try store.verify()
            } catch {
                throw RuntimeFailure(error.message)
            }
            for removal in report.removed {
                print("removed  \(removal.url.map(redactURL) ?? removal.key)  \(removal.reason)")
            }
            var summary = "verified \(report.checked) \(CacheCommand.plural(report.checked, "entry", "entries")): "
                + "\(report.intact) intact, \(report.removed.count) corrupt removed"
            if report.changed > 0 { summary += ", \(report.changed) changed while checking (kept)" }
            if report.straySidecars > 0 {
                summary += ", \(report.straySidecars) outdated \(CacheCommand.plural(report.straySidecars, "sidecar", "sidecars")) removed"
            }
            summary += CacheCommand.describe(report.sweep)
            print(summary)
            try CacheCommand.finish(failures: report.failures + report.sweep.failures)
        }
    }
}
