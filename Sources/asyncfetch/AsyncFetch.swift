import ArgumentParser
import DiskCache
import Fetch
import Loader
#if canImport(Glibc)
import Glibc
#endif

/// `asyncfetch URL...`: fetch images through the cache and report each URL's phase.
/// Parsing and options live here; running in `AsyncFetch+Run.swift`.
struct AsyncFetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "asyncfetch",
        abstract: "Fetch images through a persistent, HTTP-aware disk cache.",
        usage: """
            asyncfetch [<options>] <url> ...
              asyncfetch [<options>] --input <file> [<url> ...]
              asyncfetch cache <subcommand>
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

    @Option(name: [.short, .customLong("input")], help: ArgumentHelp(
        "Also read URLs from this file, one per line ('-' for stdin); blank lines and '#' comments are skipped. (default: none)",
        valueName: "file"))
    var input: String?

    @OptionGroup var cache: CacheOptions

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp(
        "Also write the body to this file ('-' for stdout; reports then go to stderr). One URL only. (default: none)",
        valueName: "file"))
    var output: String?

    @Flag(help: "Never use the network: report which URLs are cached.")
    var offline = false

    @Flag(help: "Print JSON Lines: one object per phase change, then a summary.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print only the URLs that did not succeed (failure, empty).")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Add HTTP detail (status, version, attempts, timings).")
    var verbose = false

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Show a progress bar on stderr. (default: when stderr is a terminal and there is more than one URL)"))
    var progress: Bool?

    @Option(help: ArgumentHelp("Concurrent transfers.", valueName: "n"))
    var jobs: Int = Defaults.jobs

    @Option(name: .customLong("max-size"), help: ArgumentHelp("Largest body accepted (bytes, or K/M/G).", valueName: "size"))
    var maxSize = SizeValue(bytes: Defaults.maxSize)

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Time allowed to connect.", valueName: "duration"))
    var connectTimeout = DurationValue(seconds: Defaults.connectTimeout)

    @Option(help: ArgumentHelp("Time allowed for each attempt.", valueName: "duration"))
    var timeout = DurationValue(seconds: Defaults.timeout)

    @Option(help: ArgumentHelp("Extra attempts on connect errors, timeouts, 408, 429 and 5xx.", valueName: "n"))
    var retries: Int = Defaults.retries

    @Option(name: .customLong("default-ttl"), help: ArgumentHelp(
        "Freshness of responses that give none (0 disables default caching).", valueName: "duration"))
    var defaultTTL = DurationValue(seconds: Defaults.defaultTTL)

    @Option(name: .customLong("max-age"), help: ArgumentHelp(
        "Treat stored entries as fresh for this long, whatever the server said. (default: as the server said)",
        valueName: "duration"))
    var maxAge: DurationValue?

    @Flag(help: "Contact the server for every URL (revalidating stored entries).")
    var refresh = false

    @Flag(name: .customLong("stale-if-error"), help: "When the network fails, serve a stale stored copy (not for must-revalidate).")
    var staleIfError = false

    @Flag(help: "Store any content, not only images.")
    var any = false

    @Option(name: [.customShort("H"), .long], help: ArgumentHelp(
        "Add a request header (repeatable). (default: none)", valueName: "'Name: value'"))
    var header: [String] = []

    @Option(help: ArgumentHelp(
        "Also trust the CA certificates in this PEM file. (default: the system's CA store only)", valueName: "file"))
    var cacert: String?

    @Flag(help: "Do not verify TLS certificates (prints a warning).")
    var insecure = false

    /// Usage checks. They run at the start of `run()`, not in `validate()`:
    /// swift-argument-parser calls `validate()` before it reports unknown
    /// options, and `asyncfetch --bogus` must say "Unknown option", not
    /// "no URL given".
    func checkUsage() throws {
        if urls.isEmpty && input == nil {
            throw UsageError("no URL given (name URLs as arguments, or a list with --input FILE)")
        }
        if jobs < 1 { throw UsageError("--jobs must be at least 1") }
        if retries < 0 { throw UsageError("--retries must be 0 or more") }
        if output != nil && (urls.count != 1 || input != nil) {
            throw UsageError("-o/--output takes exactly one URL, named on the command line")
        }
        for line in header where !line.contains(":") {
            throw UsageError("-H expects 'Name: value', got '\(line)'")
        }
    }
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
