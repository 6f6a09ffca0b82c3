import ArgumentParser
import DiskCache
import HTTPCaching
import Loader
import Support

extension CacheCommand {
    /// `cache list [--json]`: every intact entry, sorted by URL, then the broken ones.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the cached entries.",
            discussion: """
                One line per entry: fresh or stale, when it was stored (UTC), its size and \
                content type, and its URL. --json prints one object per line with url, \
                path, bytes, storedAt, fresh, contentType and status. Broken entries (those \
                'cache stats' counts and 'cache verify' removes) follow as 'broken' lines with \
                the reason; in JSON, objects with url (absent when unreadable), path, bytes, fresh (false) and broken.
                """)
        @OptionGroup var cache: CacheOptions

        @Flag(help: "Print JSON Lines: one object per entry.")
        var json = false

        @Option(name: .customLong("default-ttl"), parsing: .unconditional, help: ArgumentHelp(
            "Freshness of responses that gave none, as for fetching.", valueName: "duration"))
        var defaultTTL = DurationValue(seconds: CachingDefaults.defaultTTL)

        @Flag(name: .customLong("no-heuristic"), help: "Do not count Last-Modified heuristics as freshness, as for fetching.")
        var noHeuristic = false

        func run() throws {
            guard let store = try cache.openStoreIfPresent().store else { return }   // no directory: no entries
            let scan = try CacheCommand.scan(store)
            let out = LineOutput(fd: 1)
            let freshness = Freshness(defaultTTL: defaultTTL.seconds, heuristic: !noHeuristic)
            CacheEntryLine.listing(scan, directory: store.directory, freshness: freshness, now: currentUnixTime(), json: json) {
                out.line($0)
            }
            out.flush()
            if out.broken { throw OutputFailure.error(errno: out.writeError) }
        }
    }
}
