import ArgumentParser
import DiskCache
import Fetch
import HTTPCaching
import Loader
import Support

extension CacheCommand {
    /// `cache list [--json]`: every intact entry, sorted by URL.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the cached entries.",
            discussion: """
                One line per entry: fresh or stale, when it was stored (UTC), its size and \
                content type, and its URL. --json prints one object per line with url, \
                path, bytes, storedAt, fresh, contentType and status.
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
            let store = try cache.openStore()
            let scan = try CacheCommand.scan(store)
            let freshness = Freshness(defaultTTL: defaultTTL.seconds, heuristic: !noHeuristic)
            let now = currentUnixTime()
            let out = LineOutput(fd: 1)
            // The type column is as wide as its longest value (capped), so the URLs line up.
            let typeWidth = min(Defaults.listTypeColumnMax,
                                scan.intact.map { ($0.metadata.header("Content-Type") ?? "-").count }.max() ?? 0)
            for entry in scan.intact.sorted(by: { $0.metadata.url < $1.metadata.url }) {
                let meta = entry.metadata
                let fresh = freshness.isFresh(meta, now: now)
                if json {
                    var line = JSONLine()
                    line.add("url", redactURL(meta.url))
                    line.add("path", meta.hasBody ? entry.bodyPath : nil)
                    line.add("bytes", meta.bodyLength)
                    line.add("storedAt", HumanUnits.isoTimestamp(meta.storedAt))
                    line.add("fresh", fresh)
                    line.add("contentType", meta.header("Content-Type"))
                    line.add("status", meta.status)
                    out.line(line.rendered)
                } else {
                    let size = meta.hasBody ? HumanUnits.bytes(meta.bodyLength) : "HTTP \(meta.status)"
                    let type = meta.header("Content-Type") ?? "-"
                    out.line("\(fresh ? "fresh" : "stale")  \(HumanUnits.humanTimestamp(meta.storedAt))  "
                             + "\(CacheCommand.padded(size, 10))  \(CacheCommand.padding(type, toLength: typeWidth))  \(redactURL(meta.url))")
                }
            }
            out.flush()
            if out.broken { throw OutputFailure.error(errno: out.writeError) }
        }
    }
}
