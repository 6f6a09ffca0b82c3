import ArgumentParser
import DiskCache
import ImageDecoding
import enum Loader.CacheReportLine

extension CacheCommand {
    /// `cache verify`: reread every entry, remove the corrupt ones.
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every entry's body against its recorded length and XXH3-128 digest; remove corrupt entries.",
            discussion: """
                Also removes partial or damaged entries and leftovers of killed runs. A file named like \
                an entry but without any metadata is not the cache's: it is named ('kept') and \
                left alone, and so is an entry whose files this user may not read (a mode-000 file): it \
                cannot be judged, so it is named ('unreadable') and kept. Prints one line per removed \
                entry, then a summary. Exit status 1 if something could not be removed or checked. With --decode, every stored image libvips reads is \
                also decoded, and one the decoder refuses is removed. --json prints JSON Lines: one object \
                per entry named (action removed, unreadable or kept; key, url, path, reason, bytes), then \
                {"summary":{...}} with checked, intact, removed, removedBytes, changed, unreadable, kept, \
                straySidecars, swept, sweptBytes, temporaryKept and failures.
                """)
        @OptionGroup var cache: CacheOptions

        @Flag(help: "Print JSON Lines: one object per entry removed or kept, then a summary object.")
        var json = false

        @Flag(help: "Also decode every pixel of each stored image (libvips); remove the ones that do not decode.")
        var decode = false

        func run() throws {
            let (store, directory) = try cache.openStoreIfPresent(writable: true)
            var report = DiskCacheStore.VerifyReport()   // no directory: nothing to check
            do {
                // The decoder's refusal of a stored image; nil: decoded, or a format it does not read.
                let bodyCheck: ((CacheEntry) -> String?)? = decode
                    ? { ImageDecoding.decode(path: $0.bodyPath, formatName: $0.metadata.format).refusal } : nil
                if let store { report = try store.verify(bodyCheck: bodyCheck) }
            } catch {
                throw RuntimeFailure(error.message)
            }
            for line in CacheReportLine.verifiedLines(report, directory: directory, json: json) { print(line) }
            try CacheCommand.finish(failures: report.failures + report.sweep.failures)
            if !report.unreadable.isEmpty { throw ExitCode(1) }   // not every entry could be checked
        }
    }
}
