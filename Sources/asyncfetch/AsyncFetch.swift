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

/// A failure after the URLs were reported (e.g. writing `-o`): exit 1.
struct RuntimeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// Parses `asyncfetch cache …`. A command with positional URLs cannot also
/// route subcommands, so `Main` sends arguments starting with `cache` here.
struct CacheRoot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "asyncfetch", subcommands: [CacheCommand.self])
}

/// The root for `--generate-completion-script`: the options and
/// subcommands of `asyncfetch` without the positional URLs, which would make
/// the generated scripts take `cache` for a URL and never complete its
/// subcommands.
///
/// `--version` is an option of this root only: a `version:` in the
/// configuration would be offered to every `cache` subcommand, which rejects it.
struct CompletionRoot: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "asyncfetch", subcommands: [CacheCommand.self])

    @OptionGroup var options: FetchOptions

    @Flag(help: "Show the version.") var version = false
}
