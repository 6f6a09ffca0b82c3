import ArgumentParser
import DiskCache
import Fetch
#if canImport(Glibc)
import Glibc
#endif

/// `asyncfetch cache …`: look after the cache (SPEC §7).
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and maintain the cache.",
        subcommands: [Dir.self, Path.self])

    struct Dir: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the cache directory.")
        @OptionGroup var cache: CacheOptions

        func run() throws {
            print(try cache.openStore().directory)
        }
    }

    struct Path: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each URL's body path (exit 1 if any is not cached).")
        @OptionGroup var cache: CacheOptions
        @Argument(help: "URLs to look up.") var urls: [String]

        func validate() throws {
            if urls.isEmpty { throw ValidationError("no URL given") }
        }

        func run() throws {
            let store = try cache.openStore()
            var missing = false
            for url in urls {
                guard let key = try? CacheKey(url: url) else {
                    Console.error("asyncfetch: \(redactURL(url)): invalid URL")
                    missing = true
                    continue
                }
                if let entry = store.lookup(key.hex), entry.metadata.hasBody {
                    print(entry.bodyPath)
                } else {
                    Console.error("asyncfetch: \(redactURL(url)): not cached")
                    missing = true
                }
            }
            if missing { throw ExitCode(1) }
        }
    }
}
