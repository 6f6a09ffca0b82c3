import ArgumentParser
import Fetch
import HTTPCaching
import Loader
#if canImport(Glibc)
import Glibc
#endif

extension Shard: ExpressibleByArgument {}

/// Every option of `asyncfetch URL...`, with its help text and default.
struct FetchOptions: ParsableArguments {
    @Option(name: [.short, .customLong("input")], help: ArgumentHelp(
        "Also read URLs from this file, one per line ('-' for stdin); blank lines and '#' comments are skipped. Repeatable; with -P a line 'URL<TAB>name' names its file. (default: none)",
        valueName: "file"), completion: .file())
    var input: [String] = []

    @OptionGroup var cache: CacheOptions

    @OptionGroup var remote: RemoteOptions

    // Taken whatever it looks like, so that "--shard -1/2" is told the
    // accepted forms (not that the value is missing).
    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Take only the URLs whose cache key falls in shard K of N (0 <= K < N), the same on every machine. (default: all)",
        valueName: "K/N"))
    var shard: Shard?

    @Option(name: [.short, .customLong("output")], help: ArgumentHelp(
        "Also write the body to this file ('-' for stdout; reports then go to stderr). One URL only. (default: none)",
        valueName: "file"), completion: .file())
    var output: String?

    @Option(name: [.customShort("P"), .customLong("output-dir")], help: ArgumentHelp(
        "Also put each successful body in this folder, under a readable name (--name); reflinks where the file system has them, else copies. (default: none)",
        valueName: "dir"), completion: .directory)
    var outputDir: String?

    @Flag(name: .customShort("O"), help: "Put each successful body in the current folder (the same as -P .).")
    var outputHere = false

    @Option(help: ArgumentHelp(
        "Names in --output-dir: a template of {name} (last path segment), {host}, {path}, {md5}, {ext}; '/' makes folders. (default: {name})",
        valueName: "template"))
    var name: String?

    @Flag(help: "With --output-dir, make hard links to the cache's files: no extra space, but editing one in place edits the cache.")
    var link = false

    @Flag(help: "Never use the network: report which URLs are cached.")
    var offline = false

    @Flag(help: "Print JSON Lines: one object per phase change, then a summary.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print only the URLs that did not succeed (failure, empty); with -v, each with its detail.")
    var quiet = false

    @Flag(name: .shortAndLong, help: "Add HTTP detail (status, version, attempts, a resumed download, timings).")
    var verbose = false

    @Flag(inversion: .prefixedNo, help: ArgumentHelp(
        "Show a progress bar on stderr. (default: when stderr is a terminal, there is more than one URL and no -q)"))
    var progress: Bool?

    // Numbers are taken whatever they look like, so that "--jobs -1" is
    // told it must be at least 1 (not that the value is missing).
    @Option(parsing: .unconditional, help: ArgumentHelp("Concurrent transfers over all hosts.", valueName: "n"))
    var jobs: Int = Defaults.jobs

    @Option(name: .customLong("jobs-per-host"), parsing: .unconditional, help: ArgumentHelp(
        "Concurrent transfers to one host (fewer while it answers 429).", valueName: "n"))
    var jobsPerHost: Int = Defaults.jobsPerHost

    @Option(name: .customLong("max-size"), parsing: .unconditional, help: ArgumentHelp("Largest body accepted (bytes, or K/M/G; 0: no limit).", valueName: "size"))
    var maxSize = SizeValue(bytes: Defaults.maxSize)

    @Option(name: .customLong("connect-timeout"), parsing: .unconditional, help: ArgumentHelp("Time allowed to connect (0: libcurl's own 300s).", valueName: "duration"))
    var connectTimeout = DurationValue(seconds: Defaults.connectTimeout)

    @Option(parsing: .unconditional, help: ArgumentHelp("Time allowed for each attempt (0: no limit).", valueName: "duration"))
    var timeout = DurationValue(seconds: Defaults.timeout)

    @Option(parsing: .unconditional, help: ArgumentHelp("Extra attempts on connect errors, timeouts, 408, 429 and 5xx.", valueName: "n"))
    var retries: Int = Defaults.retries

    @Option(name: .customLong("default-ttl"), parsing: .unconditional, help: ArgumentHelp(
        "Freshness of responses that give none (0 disables default caching).", valueName: "duration"))
    var defaultTTL = DurationValue(seconds: CachingDefaults.defaultTTL)

    @Flag(name: .customLong("no-heuristic"), help: ArgumentHelp(
        "Do not treat a response with Last-Modified (and no max-age or Expires) as fresh for 10% of its age."))
    var noHeuristic = false

    @Option(name: .customLong("max-age"), parsing: .unconditional, help: ArgumentHelp(
        "Treat stored entries as fresh for this long, whatever the server said "
            + "(a remembered error: never longer than it said). (default: as the server said)",
        valueName: "duration"))
    var maxAge: DurationValue?

    @Flag(help: "Contact the server for every URL (revalidating stored entries).")
    var refresh = false

    @Flag(name: .customLong("stale-if-error"), help: "When the network fails, serve a stale stored copy (not for must-revalidate).")
    var staleIfError = false

    @Flag(help: "Make this run's cache entries durable before exiting (one file-system flush, not one per file).")
    var sync = false

    @Flag(help: "Store any content, not only images.")
    var any = false

    @Flag(help: ArgumentHelp(
        "Also decode every pixel (libvips) before storing an image; store only what decodes. BMP and ICO keep the structure check.",
        discussion: "Images over 100 megapixels are refused by this check. See docs/images.md for what it costs."))
    var decode = false

    @Option(name: [.customShort("H"), .long], help: ArgumentHelp(
        "Add a request header (repeatable). (default: none)",
        discussion: "As curl: 'Name;' sends an empty value; 'Name:' sends no such header, not even a default one (Accept, User-Agent, Accept-Encoding).",
        valueName: "'Name: value'"))
    var header: [String] = []

    @Option(help: ArgumentHelp(
        "Also trust the CA certificates in this PEM file. (default: the system's CA store only)", valueName: "file"),
        completion: .file(extensions: ["pem", "crt"]))
    var cacert: String?

    @Flag(help: "Do not verify TLS certificates (prints a warning).")
    var insecure = false

    @Option(name: .customLong("user-agent"), help: ArgumentHelp(
        "Send this User-Agent with every request ('' sends none, as curl's -A ''). (default: \(Defaults.userAgent))", valueName: "string"))
    var userAgent: String?

    /// The parsed options as plain values (what the run works from).
    func settings(urls: [String]) -> RunSettings {
        var settings = RunSettings()
        settings.urls = urls
        settings.input = input
        settings.cacheDir = cache.cacheDir
        settings.output = output
        settings.outputDir = outputDir ?? (outputHere ? "." : nil)
        settings.name = name
        settings.link = link
        settings.offline = offline
        settings.json = json
        settings.quiet = quiet
        settings.verbose = verbose
        settings.progress = progress
        settings.jobs = jobs
        settings.jobsPerHost = jobsPerHost
        settings.maxSize = maxSize.bytes
        settings.connectTimeout = connectTimeout.seconds
        settings.timeout = timeout.seconds
        settings.retries = retries
        settings.defaultTTL = defaultTTL.seconds
        settings.heuristic = !noHeuristic
        settings.maxAge = maxAge?.seconds
        settings.refresh = refresh
        settings.staleIfError = staleIfError
        settings.sync = sync
        settings.any = any
        settings.decode = decode
        settings.header = header
        settings.cacert = cacert
        settings.insecure = insecure
        if let userAgent { settings.userAgent = userAgent }
        settings.remoteCache = remote.remoteCache
        settings.shard = shard
        return settings
    }
}
