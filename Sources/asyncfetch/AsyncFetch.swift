import ArgumentParser
import DiskCache
import Fetch
import Loader
#if canImport(Glibc)
import Glibc
#endif

/// `asyncfetch URL...`: fetch images through the cache and report each URL's phase.
struct AsyncFetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "asyncfetch",
        abstract: "Fetch images through a persistent, HTTP-aware disk cache.",
        discussion: """
            Each URL ends in one phase: success (with the cached path), failure (with the \
            reason) or empty (not cached, with --offline). Exit status: 0 all succeeded, \
            1 any failure or empty, 2 usage error, 130/143 interrupted.
            """,
        version: Defaults.version,
        subcommands: [CacheCommand.self])

    @Argument(help: ArgumentHelp("URLs to fetch.", valueName: "url"))
    var urls: [String] = []

    @OptionGroup var cache: CacheOptions

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp(
        "Also write the body to this file ('-' for stdout; reports then go to stderr). One URL only.", valueName: "file"))
    var output: String?

    @Flag(help: "Never use the network: report which URLs are cached.")
    var offline = false

    @Flag(help: "Print JSON Lines: one object per phase change, then a summary.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print only failures.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Add HTTP detail (status, version, attempts, timings).")
    var verbose = false

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
        "Treat stored entries as fresh for this long, whatever the server said.", valueName: "duration"))
    var maxAge: DurationValue?

    @Flag(help: "Contact the server for every URL (revalidating stored entries).")
    var refresh = false

    @Flag(name: .customLong("stale-if-error"), help: "When the network fails, serve a stale stored copy (not for must-revalidate).")
    var staleIfError = false

    @Flag(help: "Store any content, not only images.")
    var any = false

    @Option(name: [.customShort("H"), .long], help: ArgumentHelp("Add a request header (repeatable).", valueName: "'Name: value'"))
    var header: [String] = []

    @Option(help: ArgumentHelp("Also trust the CA certificates in this PEM file.", valueName: "file"))
    var cacert: String?

    @Flag(help: "Do not verify TLS certificates (prints a warning).")
    var insecure = false

    func validate() throws {
        if urls.isEmpty { throw ValidationError("no URL given") }
        if jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        if retries < 0 { throw ValidationError("--retries must be 0 or more") }
        if output != nil && urls.count != 1 { throw ValidationError("-o/--output takes exactly one URL") }
        for line in header where !line.contains(":") {
            throw ValidationError("-H expects 'Name: value', got '\(line)'")
        }
    }

    func run() async throws {
        let store = try cache.openStore()
        if !offline { store.sweepTemporaryFiles() }   // leftovers of killed runs (cheap when there are none)
        let reporter = Reporter(style: json ? .json : .human, quiet: quiet, verbose: verbose,
                                resultsToStderr: output == "-")
        if insecure { reporter.warn("--insecure: TLS certificates are not verified") }
        let loader = ImageLoader(cache: store, options: loaderOptions())
        let started = monotonicSeconds()
        var delivered: String?
        for await event in loader.batch(urls) {
            reporter.report(event)
            if case .success(let result) = event.phase { delivered = result.path }
        }
        reporter.finish(duration: monotonicSeconds() - started)
        if let output, let delivered {
            try copyBody(from: delivered, to: output)
        }
        let code = reporter.summary.exitCode
        if code != 0 { throw ExitCode(code) }
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

    /// Copies the stored body to `-o FILE` or stdout, streaming.
    private func copyBody(from source: String, to destination: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw RuntimeFailure("cannot read \(source): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        let toStdout = destination == "-"
        let outputFD = toStdout ? 1 : open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard outputFD >= 0 else { throw RuntimeFailure("cannot write \(destination): \(String(cString: strerror(errno)))") }
        defer { if !toStdout { close(outputFD) } }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = read(input, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw RuntimeFailure("cannot read \(source): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            var offset = 0
            while offset < n {
                let w = buffer.withUnsafeBytes { write(outputFD, $0.baseAddress! + offset, n - offset) }
                if w < 0 && errno == EINTR { continue }
                guard w > 0 else { throw RuntimeFailure("cannot write \(destination): \(String(cString: strerror(errno)))") }
                offset += w
            }
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
