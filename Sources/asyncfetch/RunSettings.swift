import Fetch
import HTTPCaching
import Loader
import Support
#if canImport(Glibc)
import Glibc
#endif

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
        if let cacert, let problem = Self.unreadableFile(cacert) {
            throw UsageError(environment: "cannot read --cacert \(cacert): \(problem)")
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
        if (info.st_mode & S_IFMT) == S_IFDIR { return "is a directory" }
        // Only a regular file is read ahead of libcurl: a pipe (`<(…)`) read here would be empty for it.
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return containsPEM(fd) ? nil : "no PEM certificate in it (a line '-----BEGIN CERTIFICATE-----')"
    }

    /// Whether the file (read up to `Defaults.maxCAFileScan`) has a PEM
    /// certificate ("-----BEGIN CERTIFICATE-----", or "TRUSTED CERTIFICATE"):
    /// libcurl takes CA files in PEM only, and would report anything else for
    /// every https URL.
    private static func containsPEM(_ fd: Int32) -> Bool {
        let marker = Array("CERTIFICATE-----".utf8)
        // Each read lands after the last `marker.count - 1` bytes of the ones
        // before, so a marker split between two reads is found too.
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var kept = 0, scanned = 0
        while scanned < Defaults.maxCAFileScan {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + kept, $0.count - kept) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            let total = kept + n
            let found = buffer.withUnsafeMutableBytes { bytes -> Bool in
                if Self.find(marker, in: UnsafeRawBufferPointer(rebasing: bytes[0..<total])) { return true }
                kept = min(marker.count - 1, total)
                if let base = bytes.baseAddress { memmove(base, base + (total - kept), kept) }
                return false
            }
            if found { return true }
            scanned += n
        }
        return false
    }

    /// Whether `bytes` holds `marker` (a `memchr` for its first byte, then a `memcmp`).
    private static func find(_ marker: [UInt8], in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress, bytes.count >= marker.count else { return false }
        var offset = 0
        while offset <= bytes.count - marker.count {
            guard let hit = memchr(base + offset, Int32(marker[0]), bytes.count - marker.count + 1 - offset) else { return false }
            offset = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + offset, marker, marker.count) == 0 { return true }
            offset += 1
        }
        return false
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
