import Fetch
import HTTPCaching
import Support

/// What a run of `asyncfetch URL...` was asked to do, as plain values, one
/// per option (the names are the options'), and how they become the
/// loader's settings (`loaderOptions`). It owns that assembly and the usage
/// checks of the values (`usageProblem`, which reads only a `--cacert` file);
/// the `--input` lists are opened by `URLList.open(inputs:)`; the cache and
/// the folders a run writes are opened by the tool. Public: both of the tool's parsers
/// (swift-argument-parser's and `QuickParse`) produce it. Defaults come
/// from `Defaults`.
public struct RunSettings: Sendable, Equatable {
    /// URLs named as arguments.
    public var urls: [String] = []
    /// `--input FILE` lists (`-` is stdin), read in order after `urls`.
    public var input: [String] = []
    /// `--cache-dir` (else the default cache directory).
    public var cacheDir: String?
    /// `-o FILE` (`-` is stdout) for the one URL.
    public var output: String?
    /// `--output-dir DIR` (`-P`).
    public var outputDir: String?
    /// `--name TEMPLATE` of files in `outputDir`.
    public var name: String?
    /// `--link`: hard-link files into `outputDir`.
    public var link = false
    /// `--offline`.
    public var offline = false
    /// `--json`: JSON Lines instead of human lines.
    public var json = false
    /// `-q`.
    public var quiet = false
    /// `-v`.
    public var verbose = false
    /// `--progress` (true), `--no-progress` (false), else nil (a bar on a terminal).
    public var progress: Bool?
    /// `--jobs`.
    public var jobs = Defaults.jobs
    /// `--jobs-per-host`.
    public var jobsPerHost = Defaults.jobsPerHost
    /// `--max-size`, in bytes (0: no limit).
    public var maxSize = Defaults.maxSize
    /// `--connect-timeout`, in seconds.
    public var connectTimeout = Defaults.connectTimeout
    /// `--timeout`, in seconds.
    public var timeout = Defaults.timeout
    /// `--retries`.
    public var retries = Defaults.retries
    /// `--default-ttl`, in seconds.
    public var defaultTTL = CachingDefaults.defaultTTL
    /// False with `--no-heuristic`.
    public var heuristic = true
    /// `--max-age`, in seconds.
    public var maxAge: Double?
    /// `--refresh`.
    public var refresh = false
    /// `--stale-if-error`.
    public var staleIfError = false
    /// `--sync`.
    public var sync = false
    /// `--any`.
    public var any = false
    /// `--decode`.
    public var decode = false
    /// `-H` lines: `Name: value`, `Name;` (empty value), `Name:` (not sent): `HeaderArgument`.
    public var header: [String] = []
    /// `--cacert FILE`.
    public var cacert: String?
    /// `--insecure`.
    public var insecure = false
    /// `User-Agent` of every request this run makes (`--user-agent`).
    public var userAgent = Defaults.userAgent
    /// `--remote-cache` (else `ASYNCFETCH_REMOTE_CACHE` is read at the start of the run).
    public var remoteCache: String?
    /// `--shard K/N`.
    public var shard: Shard?

    public init() {}

    /// The loader's settings for these values: `--jobs` and `--jobs-per-host`
    /// also bound the connections, `-H` lines become request headers (those
    /// `HeaderArgument` refuses are left out: `usageProblem` refuses the run).
    public func loaderOptions() -> LoaderOptions {
        var options = LoaderOptions()
        options.offline = offline
        options.refresh = refresh
        options.freshness = Freshness(defaultTTL: defaultTTL, maxAgeOverride: maxAge, heuristic: heuristic)
        options.acceptAnyContent = any
        options.decode = decode
        options.staleIfError = staleIfError
        options.jobs = jobs
        options.jobsPerHost = jobsPerHost
        // Only -o and --output-dir (-O) take a body the cache could not store.
        options.keepsUnstoredBodies = output != nil || outputDir != nil
        var fetch = FetchConfiguration()
        fetch.maxSize = maxSize
        fetch.connectTimeout = connectTimeout
        fetch.timeout = timeout
        fetch.retries = retries
        fetch.maxConnections = jobs
        fetch.maxHostConnections = jobsPerHost
        fetch.caFile = cacert
        fetch.insecure = insecure
        fetch.userAgent = userAgent
        // Repeated names are all sent, as separate lines (Vary then combines them, RFC 9111 §4.1).
        fetch.apply(headerArguments: header)
        options.fetch = fetch
        return options
    }
}
