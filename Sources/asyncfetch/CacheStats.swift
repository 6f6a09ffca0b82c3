import ArgumentParser
import DiskCache
import struct Loader.JSONLine
import enum Support.HumanUnits

extension CacheCommand {
    /// `cache stats [--json]`: totals.
    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show how many entries the cache holds and how much space its files take.",
            discussion: """
                bytes counts every file of the cache's own (bodies, metadata, temporary \
                files); --max-size of 'cache prune' bounds the same number. --json prints \
                one object: entries, bytes, dir, broken, temporaryFiles.
                """)
        @OptionGroup var cache: CacheOptions

        @Flag(help: "Print one JSON object.")
        var json = false

        func run() throws {
            let store = try cache.openStore()
            let scan = try CacheCommand.scan(store)
            let entries = scan.intact.count
            let broken = scan.entries.count - entries
            if json {
                var line = JSONLine()
                line.add("entries", entries)
                line.add("bytes", scan.bytes)
                line.add("dir", store.directory)
                line.add("broken", broken)
                line.add("temporaryFiles", scan.temporaryFiles)
                print(line.rendered)
            } else {
                print("directory  \(store.directory)")
                print("entries    \(entries)")
                print("size       \(HumanUnits.bytes(scan.bytes)) (\(scan.bytes) bytes)")
                if broken > 0 { print("broken     \(broken) (misses; 'asyncfetch cache verify' removes them)") }
                if scan.temporaryFiles > 0 {
                    print("temporary  \(scan.temporaryFiles) files, \(HumanUnits.bytes(scan.temporaryBytes)) (downloads in progress or leftovers)")
                }
            }
        }
    }
}
