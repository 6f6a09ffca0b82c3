import DiskCache
import Fetch
import Loader
import RemoteCache
import Support
import Testing
import TestSupport

/// `cache pull` as the tool runs it (`ReportedPull`): each URL's line on the
/// stream it belongs to, the summary, and whether every URL is now cached
/// locally, against a real nginx WebDAV tier on 127.0.0.1 (or a port
/// nothing listens on). The end-to-end tests check the exit codes the tool
/// maps the outcome to.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ReportedPullTests {
    /// What a pull wrote: stdout's lines and stderr's, each in order.
    final class Lines: Sendable {
        private let lines = Locked<(output: [String], error: [String])>(([], []))
        var output: [String] { lines.withLock { $0.output } }
        var error: [String] { lines.withLock { $0.error } }
        func out(_ line: String) { lines.withLock { $0.output.append(line) } }
        func err(_ line: String) { lines.withLock { $0.error.append(line) } }
    }

    /// The outcome's case, by name (`LoadError`s are not `Equatable`).
    static func name(_ outcome: ReportedPull.Outcome) -> String {
        switch outcome {
        case .allCached: "allCached"
        case .notAllCached: "notAllCached"
        case .unreadableLists: "unreadableLists"
        }
    }

    /// Stores a small body as `url`'s entry in `store`, as the loader would.
    static func put(_ url: String, in store: DiskCacheStore) throws {
        let key = try CacheKey(url: url)
        let writer = try store.makeWriter(for: key.hex)
        try [UInt8](repeating: 7, count: 100).withUnsafeBytes { try writer.append($0) }
        _ = try writer.commit(CacheMetadata(url: key.storedURL, status: 200, requestTime: 1, responseTime: 2,
                                            headers: [CacheMetadata.Header("Content-Type", "image/png")]))
    }

    @Test func eachURLGetsItsLineAndTheOutcomeSaysWhetherAllAreCached() async throws {
        let remote = try WebDAVStore()
        let location = try RemoteLocation.parse(remote.url, environment: [:])
        let urls = (0..<4).map { "http://origin.test/img/\($0).png" }
        // Another machine uploads the first two; this one already holds the third; the fourth is nowhere.
        let other = try TempDirectory(prefix: "asyncfetch-pull")
        let otherStore = try DiskCacheStore(directory: other.file("cache"))
        let uploader = RemoteCache(location: location, fetch: FetchConfiguration())
        for url in urls[0..<2] {
            try Self.put(url, in: otherStore)
            uploader.upload(key: try CacheKey(url: url).hex, url: url, from: otherStore, shareable: { _ in true })
        }
        await uploader.drain()
        #expect(uploader.stats.uploads == 2, "\(uploader.stats)")
        let temp = try TempDirectory(prefix: "asyncfetch-pull")
        let store = try DiskCacheStore(directory: temp.file("cache"))
        try Self.put(urls[2], in: store)

        let lines = Lines()
        let pull = ReportedPull(location: location, verbose: false) { lines.err($0) }
        // One at a time: the lines come in the list's order.
        let outcome = await pull.run(URLList(arguments: urls + ["not a url"], inputs: []), into: store, jobs: 1,
                                     output: { lines.out($0) })
        #expect(Self.name(outcome) == "notAllCached")
        #expect(lines.output == ["pulled   \(urls[0])", "pulled   \(urls[1])"])
        #expect(lines.error == ["asyncfetch: \(urls[3]): not in the remote cache",
                                "asyncfetch: not a url: invalid URL",
                                "2 pulled, 1 already cached, 2 not pulled (remote cache: 1 misses, 0 errors)"])
        for url in urls[0..<3] { #expect(store.lookup(try CacheKey(url: url).hex) != nil, "\(url)") }

        // Every URL asked is now here: nothing on stdout, the tier not asked.
        let again = Lines()
        let second = ReportedPull(location: location, verbose: false) { again.err($0) }
        let all = await second.run(URLList(arguments: Array(urls[0..<3]), inputs: []), into: store, jobs: 2, output: { again.out($0) })
        #expect(Self.name(all) == "allCached")
        #expect(again.output.isEmpty)
        #expect(again.error == ["0 pulled, 3 already cached, 0 not pulled (remote cache: 0 misses, 0 errors)"])
    }

    /// A tier that cannot be read: its first error is a warning saying no
    /// origin is contacted instead, each URL says the tier failed (not that
    /// it lacks the URL), and `-v` (`verbose`) needs no hint to show more.
    @Test func aTierThatCannotBeReadIsNamedAsTheReason() async throws {
        let location = try RemoteLocation.parse("http://127.0.0.1:9/cache/", environment: [:])
        let temp = try TempDirectory(prefix: "asyncfetch-pull")
        let store = try DiskCacheStore(directory: temp.file("cache"))
        let url = "http://origin.test/a.png"
        for verbose in [false, true] {
            let lines = Lines()
            let pull = ReportedPull(location: location, verbose: verbose) { lines.err($0) }
            let outcome = await pull.run(URLList(arguments: [url], inputs: []), into: store, jobs: 1, output: { lines.out($0) })
            #expect(Self.name(outcome) == "notAllCached")
            #expect(lines.output.isEmpty)
            let error = lines.error
            #expect(error.count == 3, "\(error)")
            guard error.count == 3 else { continue }
            let hint = verbose ? "" : " (-v shows every remote cache error)"
            #expect(error[0].hasPrefix("asyncfetch: warning: remote cache: GET http://127.0.0.1:9/cache/"), "\(error[0])")
            #expect(error[0].hasSuffix(verbose ? "" : "(not pulled: cache pull contacts no origin; -v shows every remote cache error)"),
                    "\(error[0])")
            #expect(error[1] == "asyncfetch: \(url): not pulled: the remote cache could not be read" + hint)
            #expect(error[2] == "0 pulled, 0 already cached, 1 not pulled (remote cache: 0 misses, 1 errors)")
        }
    }

    /// A list that fails part way is as unreadable as one that cannot be
    /// opened, as for a run (`ReportedRun`): the URLs before it are pulled
    /// and reported, the summary is out, and the outcome names the list,
    /// whatever the other URLs did. Before, the pull ended 0 ("0 pulled, 0
    /// already cached, 0 not pulled") on a list it never read.
    @Test func aListThatFailsPartWayIsTheOutcome() async throws {
        let location = try RemoteLocation.parse("http://127.0.0.1:9/cache/", environment: [:])
        let temp = try TempDirectory(prefix: "asyncfetch-pull")
        let store = try DiskCacheStore(directory: temp.file("cache"))
        let url = "http://origin.test/a.png"
        try Self.put(url, in: store)
        let lines = Lines()
        let pull = ReportedPull(location: location, verbose: false) { lines.err($0) }
        // `/proc/self/mem` opens, but a read at offset 0 fails (EIO): a list that stops early.
        let list = URLList(arguments: [url], inputs: [try InputLines(path: "/proc/self/mem")])
        let outcome = await pull.run(list, into: store, jobs: 1, output: { lines.out($0) })
        guard case .unreadableLists(let errors) = outcome else {
            Issue.record("the list is the outcome: \(Self.name(outcome))")
            return
        }
        #expect(errors.map(\.message) == ["cannot read --input /proc/self/mem: Input/output error"])
        #expect(errors.first?.kind == .io && errors.first?.path == "/proc/self/mem")
        #expect(lines.output.isEmpty)
        #expect(lines.error == ["0 pulled, 1 already cached, 0 not pulled (remote cache: 0 misses, 0 errors)"])
    }
}
