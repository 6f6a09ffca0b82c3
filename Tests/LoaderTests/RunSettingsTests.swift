import Fetch
import HTTPCaching
import Loader
import Testing

/// A run's option values become the loader settings the tool's options
/// document (man/asyncfetch.1): known values in, the settings out, no I/O.
@Suite struct RunSettingsTests {
    @Test func theDefaultsAreTheLibrarysDefaults() {
        let options = RunSettings().loaderOptions()
        #expect(options.jobs == Defaults.jobs)
        #expect(options.jobsPerHost == Defaults.jobsPerHost)
        #expect(options.fetch.maxConnections == Defaults.jobs)
        #expect(options.fetch.maxHostConnections == Defaults.jobsPerHost)
        #expect(options.fetch.userAgent == Defaults.userAgent)
        #expect(options.freshness.defaultTTL == CachingDefaults.defaultTTL)
        #expect(options.freshness.maxAgeOverride == nil)
        #expect(options.fetch.headers.isEmpty)
        #expect(!options.offline && !options.refresh && !options.acceptAnyContent && !options.decode)
    }

    /// `--jobs` and `--jobs-per-host` bound the connections too, and every
    /// limit reaches the fetch configuration.
    @Test func limitsReachTheTransfers() {
        var settings = RunSettings()
        settings.jobs = 3
        settings.jobsPerHost = 2
        settings.maxSize = 4096
        settings.connectTimeout = 1.5
        settings.timeout = 7
        settings.retries = 0
        settings.cacert = "/etc/ca.pem"
        settings.insecure = true
        settings.userAgent = "probe/1"
        let options = settings.loaderOptions()
        #expect(options.jobs == 3 && options.fetch.maxConnections == 3)
        #expect(options.jobsPerHost == 2 && options.fetch.maxHostConnections == 2)
        #expect(options.fetch.maxSize == 4096)
        #expect(options.fetch.connectTimeout == 1.5)
        #expect(options.fetch.timeout == 7)
        #expect(options.fetch.retries == 0)
        #expect(options.fetch.caFile == "/etc/ca.pem")
        #expect(options.fetch.insecure)
        #expect(options.fetch.userAgent == "probe/1")
    }

    @Test func cachingOptionsReachTheLoader() {
        var settings = RunSettings()
        settings.offline = true
        settings.any = true
        settings.decode = true
        settings.staleIfError = true
        settings.defaultTTL = 60
        settings.maxAge = 5
        settings.heuristic = false
        let options = settings.loaderOptions()
        #expect(options.offline && options.acceptAnyContent && options.decode && options.staleIfError)
        #expect(options.freshness.defaultTTL == 60)
        #expect(options.freshness.maxAgeOverride == 5)
        #expect(!options.freshness.heuristic)
    }

    /// `-H 'Name: value'`: trimmed around the colon, a value may hold a
    /// colon, and a name given twice is sent twice. As curl: `Name;` sends an
    /// empty value, `Name:` sends no such header (not even a default one).
    @Test func headerLinesBecomeRequestHeaders() {
        var settings = RunSettings()
        settings.header = ["X-Token:  abc ", "Accept: image/webp", "X-Empty;", "Accept: image/png", "X-Time: 12:30",
                           "User-Agent:", "X-Gone: 1", "X-Gone:", "X-Back:", "X-Back: again"]
        let fetch = settings.loaderOptions().fetch
        #expect(fetch.headers.fields.map(\.name) == ["X-Token", "Accept", "X-Empty", "Accept", "X-Time", "X-Back"])
        #expect(fetch.headers.fields.map(\.value) == ["abc", "image/webp", "", "image/png", "12:30", "again"])
        #expect(fetch.removedHeaders == ["User-Agent", "X-Gone"])
    }

    /// The one rule of `HTTPHeaders.problem`, read from `-H` as curl writes it.
    @Test func headerArgumentsParseAsCurlDoes() throws {
        #expect(try HeaderArgument(parsing: "X-A: 1") == .send(name: "X-A", value: "1"))
        #expect(try HeaderArgument(parsing: "X-Empty;") == .send(name: "X-Empty", value: ""))
        // As curl: only a semicolon that ends the argument sends an empty value; blanks after it send nothing.
        #expect(try HeaderArgument(parsing: "X-Empty; ") == .remove(name: "X-Empty"))
        #expect(try HeaderArgument(parsing: "Accept;\t") == .remove(name: "Accept"))
        #expect(try HeaderArgument(parsing: "Accept:") == .remove(name: "Accept"))
        #expect(try HeaderArgument(parsing: "Accept:  ") == .remove(name: "Accept"))
        for line in ["no colon", "X;y", ": no name", ";"] {
            let error = try #require(throws: LoadError.self) { try HeaderArgument(parsing: line) }
            #expect(error.kind == .usage && error.message == "-H expects 'Name: value', got '\(line)'")
        }
        for (line, shown) in [("X-A: 1\r\nX-B: 2", "X-A: 1\\r\\nX-B: 2"), ("X-A\n;", "X-A\\n;")] {
            let error = try #require(throws: LoadError.self) { try HeaderArgument(parsing: line) }
            #expect(error.kind == .usage && error.message == "-H takes one header line, without a line break: got '\(shown)'")
        }
        let name = try #require(throws: LoadError.self) { try HeaderArgument(parsing: "Bad Name: x") }
        #expect(name.message == "-H expects 'Name: value', got 'Bad Name: x': \(HeaderProblem.invalidName)")
    }
}
