import ArgumentParser
import DiskCache
import enum Loader.Console
import Support

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
            let store = try cache.openStore(writable: true)
            var missing = false
            var failures: [DiskCacheError] = []
            for url in try list.all() {
                var outcome = "removed"
                var message: String?
                if let key = try? CacheKey(url: url) {
                    do {
                        if try !store.remove(key.hex) { outcome = "absent" }
                    } catch {
                        failures.append(error)
                        outcome = "failed"
                        message = error.message
                    }
                } else {
                    outcome = "invalid"
                }
                if outcome == "absent" || outcome == "invalid" {
                    missing = true
                    Console.error("asyncfetch: \(redactURL(url)): \(outcome == "invalid" ? "invalid URL" : "not cached")")
                }
                if list.json {
                    print(CacheURLInput.jsonLine(url: url) { line in
                        line.add("removed", outcome == "removed")
                        if outcome != "removed" {
                            line.add("reason", ["absent": "not-cached", "invalid": "invalid-url", "failed": "io"][outcome])
                        }
                        line.add("message", message)
                    })
                } else {
                    print(CacheCommand.padding(outcome, toLength: 7) + "  " + redactURL(url))
                }
            }
            try CacheCommand.finish(failures: failures)
            if missing { throw ExitCode(1) }
        }
    }
}
