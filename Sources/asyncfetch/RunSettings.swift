import Fetch
import HTTPCaching
import Loader
import Support

/// What `asyncfetch URL...` was asked to do, as plain values. Both parsers
/// produce it: swift-argument-parser (`FetchOptions.settings`) and, for the
/// common short command lines, `QuickParse`. Defaults come from `Defaults`.
struct RunSettings: Sendable, Equatable {
    var urls: [String] = []
    var input: [String] = []
    var cacheDir: String?
    var output: String?
    var outputDir: String?
    var name: String?
    var link = false
    var offline = false
    var json = false
    var quiet = false
    var verbose = false
    var progress: Bool?
    var jobs = Defaults.jobs
    var jobsPerHost = Defaults.jobsPerHost
    var maxSize = Defaults.maxSize
    var connectTimeout = Defaults.connectTimeout
    var timeout = Defaults.timeout
    var retries = Defaults.retries
    var defaultTTL = CachingDefaults.defaultTTL
    var heuristic = true
    var maxAge: Double?
    var refresh = false
    var staleIfError = false
    var sync = false
    var any = false
    var decode = false
    var header: [String] = []
    var cacert: String?
    var insecure = false
    /// `User-Agent` of every request this run makes (`--user-agent`).
    var userAgent = Defaults.userAgent
    /// `--remote-cache` (else `ASYNCFETCH_REMOTE_CACHE` is read at the start of the run).
    var remoteCache: String?
    var shard: Shard?

    /// Usage checks. They run at the start of the run, not in `validate()`:
    /// swift-argument-parser calls `validate()` before it reports unknown
    /// options, and `asyncfetch --bogus` must say "Unknown option", not
    /// "no URL given".
    func checkUsage() throws {
        if urls.isEmpty && input.isEmpty {
            throw UsageError("no URL given (name URLs as arguments, or a list with --input FILE)")
        }
        if offline && refresh {
            throw UsageError("--offline and --refresh contradict each other (--offline never uses the network; --refresh revalidates every URL)")
        }
        if jobs < 1 { throw UsageError("--jobs must be at least 1") }
        if jobsPerHost < 1 { throw UsageError("--jobs-per-host must be at least 1") }
        if retries < 0 { throw UsageError("--retries must be 0 or more") }
        if output != nil && (urls.count != 1 || !input.isEmpty) {
            throw UsageError("-o/--output takes exactly one URL, named on the command line")
        }
        if output != nil && outputDir != nil {
            throw UsageError("-o FILE and --output-dir DIR exclude each other (-o is for one URL, -P for a batch)")
        }
        if let name, let problem = OutputName.problem(with: name) { throw UsageError(problem) }
        if outputDir == nil && (name != nil || link) {
            throw UsageError("\(name != nil ? "--name" : "--link") works with --output-dir DIR (-P DIR) or -O")
        }
        for line in header where !line.contains(":") {
            throw UsageError("-H expects 'Name: value', got '\(line)'")
        }
        if let cacert, let problem = CAFile.problem(at: cacert) {
            throw UsageError(environment: "cannot read --cacert \(cacert): \(problem)")
        }
    }

    func loaderOptions() -> LoaderOptions {
        var options = LoaderOptions()
        options.offline = offline
        options.refresh = refresh
        options.freshness = Freshness(defaultTTL: defaultTTL, maxAgeOverride: maxAge, heuristic: heuristic)
        options.acceptAnyContent = any
        options.decode = decode
        options.staleIfError = staleIfError
        options.jobs = jobs
        options.jobsPerHost = jobsPerHost
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
        for line in header {
            let parts = line.split(separator: ":", maxSplits: 1)
            // Repeated names are all sent, as separate lines (Vary then combines them, RFC 9111 §4.1).
            fetch.headers.add(name: trimWhitespace(parts[0]), value: parts.count > 1 ? trimWhitespace(parts[1]) : "")
        }
        options.fetch = fetch
        return options
    }
}
