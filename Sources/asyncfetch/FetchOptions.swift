import ArgumentParser
import Fetch
import Loader
#if canImport(Glibc)
import Glibc
#endif

/// Every option of `asyncfetch URL...`, with its help text and default.
struct FetchOptions: ParsableArguments {
    @Option(name: [.short, .customLong("input")], help: ArgumentHelp(
        "Also read URLs from this file, one per line ('-' for stdin); blank lines and '#' comments are skipped. (default: none)",
        valueName: "file"), completion: .file())
    var input: String?

    @OptionGroup var cache: CacheOptions

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp(
        "Also write the body to this file ('-' for stdout; reports then go to stderr). One URL only. (default: none)",
        valueName: "file"), completion: .file())
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

    @Option(name: .customLong("connect-timeout"), help: ArgumentHelp("Time allowed to connect (0: libcurl's own 300s).", valueName: "duration"))
    var connectTimeout = DurationValue(seconds: Defaults.connectTimeout)

    @Option(help: ArgumentHelp("Time allowed for each attempt (0: no limit).", valueName: "duration"))
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
        "Also trust the CA certificates in this PEM file. (default: the system's CA store only)", valueName: "file"),
        completion: .file(extensions: ["pem", "crt"]))
    var cacert: String?

    @Flag(help: "Do not verify TLS certificates (prints a warning).")
    var insecure = false

    /// Usage checks. They run at the start of `run()`, not in `validate()`:
    /// swift-argument-parser calls `validate()` before it reports unknown
    /// options, and `asyncfetch --bogus` must say "Unknown option", not
    /// "no URL given".
    func checkUsage(urls: [String]) throws {
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
        if let cacert, let problem = Self.unreadableFile(cacert) {
            throw UsageError("cannot read --cacert \(cacert): \(problem)")
        }
    }

    /// Why `path` cannot be read as a file (strerror, or "is a directory"),
    /// or nil when it can: a CA file libcurl could not load would otherwise
    /// fail every https URL one by one, long after the typo.
    static func unreadableFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return String(cString: strerror(errno)) }
        return (info.st_mode & S_IFMT) == S_IFDIR ? "is a directory" : nil
    }

    func loaderOptions() -> LoaderOptions {
        var options = LoaderOptions()
        options.offline = offline
        options.refresh = refresh
        options.freshness = Freshness(defaultTTL: defaultTTL.seconds, maxAgeOverride: maxAge?.seconds)
        options.acceptAnyContent = any
        options.staleIfError = staleIfError
        options.jobs = jobs
        var fetch = FetchConfiguration()
        fetch.maxSize = maxSize.bytes
        fetch.connectTimeout = connectTimeout.seconds
        fetch.timeout = timeout.seconds
        fetch.retries = retries
        fetch.maxConnections = jobs
        fetch.caFile = cacert
        fetch.insecure = insecure
        for line in header {
            let parts = line.split(separator: ":", maxSplits: 1)
            fetch.headers.set(name: trimWhitespace(parts[0]), value: parts.count > 1 ? trimWhitespace(parts[1]) : "")
        }
        options.fetch = fetch
        return options
    }
}
