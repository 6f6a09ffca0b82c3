import ArgumentParser
import DiskCache
import enum Loader.Console
import struct Loader.CacheURLLine


extension CacheCommand {
    /// `cache rm URL...`
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove the entries of these URLs (exit 1 if any was not cached).")
        @OptionGroup var cache: CacheOptions
        @OptionGroup var list: CacheURLInput

        /// One line per URL, in order: `removed  URL`, `absent   URL` (not
        /// cached), `invalid  URL`, or `failed   URL` (with the reason on stderr).
        func run() throws {
            let urls = try list.all()
            let store = try cache.openStoreIfPresent(writable: true).store   // no directory: nothing cached
            var missing = false
            var failures: [DiskCacheError] = []
            var removedKeys = Set<String>()
            for url in urls {
                let (line, error) = CacheURLLine.remove(url, from: store, removedKeys: &removedKeys)
                if let error { failures.append(error) }
                if let complaint = line.complaint { Console.error(complaint) }
                missing = missing || line.isMissing
                print(line.removalLine(json: list.json))
            }
            try CacheCommand.finish(failures: failures)
            if missing { throw ExitCode(1) }
        }
    }
}
