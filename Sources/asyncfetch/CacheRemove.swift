import ArgumentParser
import DiskCache
import Fetch

extension CacheCommand {
    /// `cache rm URL...`
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rm",
            abstract: "Remove the entries of these URLs (exit 1 if any was not cached).")
        @OptionGroup var cache: CacheOptions
        @Argument(help: "URLs to remove.") var urls: [String]

        func validate() throws {
            if urls.isEmpty { throw ValidationError("no URL given") }
        }

        func run() throws {
            let store = try cache.openStore(writable: true)
            var missing = false
            var failures: [DiskCacheError] = []
            for url in urls {
                guard let key = try? CacheKey(url: url) else {
                    Console.error("asyncfetch: \(redactURL(url)): invalid URL")
                    missing = true
                    continue
                }
                do {
                    if try store.remove(key.hex) {
                        print("removed  \(redactURL(url))")
                    } else {
                        Console.error("asyncfetch: \(redactURL(url)): not cached")
                        missing = true
                    }
                } catch {
                    failures.append(error)
                }
            }
            try CacheCommand.finish(failures: failures)
            if missing { throw ExitCode(1) }
        }
    }
}
