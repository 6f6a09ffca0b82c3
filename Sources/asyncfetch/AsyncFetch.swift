import ArgumentParser
import DiskCache
import Fetch
import Loader
#if canImport(Glibc)
import Glibc
#endif

/// `asyncfetch URL...`: fetch images through the cache and report each URL's phase.
/// The options are in `FetchOptions`; running is in `AsyncFetch+Run.swift`.
struct AsyncFetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "asyncfetch",
        abstract: "Fetch images through a persistent, HTTP-aware disk cache.",
        usage: """
            asyncfetch [<options>] <url> ...
            asyncfetch [<options>] --input <file> [<url> ...]
            asyncfetch cache <subcommand> [<options>]
            """,
        discussion: """
            Each URL goes empty -> loading -> success | failure and is reported once, when it \
            ends: success (with the path of the body in the cache), failure (with the reason), \
            or empty (--offline and not cached). A fresh cached copy is used without the network.

            Exit status: 0 every URL succeeded, 1 any failure or empty, 2 usage error, \
            130/143 interrupted by SIGINT/SIGTERM.

            Examples:
              asyncfetch https://example.com/cat.png
              asyncfetch https://example.com/cat.png -o cat.png
              asyncfetch --offline URL ...
              asyncfetch --input urls.txt --jobs 16 --json
            """,
        version: Defaults.version,
        subcommands: [CacheCommand.self])

    @Argument(help: ArgumentHelp("URLs to fetch (http and https).", valueName: "url"))
    var urls: [String] = []

    @OptionGroup var options: FetchOptions
}
