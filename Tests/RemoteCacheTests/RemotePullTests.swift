import DiskCache
import Fetch
import Foundation
import RemoteCache
import Support
import Testing
import TestSupport

/// `RemoteCache.pull` against a real nginx WebDAV store on 127.0.0.1: one
/// "host" uploads its entries, another pulls them into its own cache.
@Suite(.serialized) struct RemotePullTests {
    /// A cache store in its own temporary directory.
    struct Host {
        let temp: TempDirectory
        let store: DiskCacheStore

        init() throws {
            temp = try TempDirectory(prefix: "asyncfetch-pull")
            store = try DiskCacheStore(directory: temp.path + "/cache")
        }

        /// Stores `body` as the entry of `url`, as the loader would.
        func put(_ url: String, _ body: [UInt8]) throws {
            let key = try CacheKey(url: url)
            let writer = try store.makeWriter(for: key.hex)
            try body.withUnsafeBytes { try writer.append($0) }
            _ = try writer.commit(CacheMetadata(url: key.storedURL, status: 200, requestTime: 1, responseTime: 2,
                                                headers: [CacheMetadata.Header("Content-Type", "image/png")]))
        }

        /// The body stored for `url`, or nil.
        func body(_ url: String) throws -> [UInt8]? {
            let key = try CacheKey(url: url)
            guard let entry = store.lookup(key.hex, url: key.storedURL, accessTime: false) else { return nil }
            return Array(try Data(contentsOf: URL(fileURLWithPath: entry.bodyPath)))
        }
    }

    /// The URLs, as the async sequence `pull` takes.
    static func sequence(_ urls: [String]) -> AsyncStream<String> {
        AsyncStream { continuation in
            for url in urls { continuation.yield(url) }
            continuation.finish()
        }
    }

    @Test func pullBringsTheTiersEntriesAndLeavesLocalOnesAlone() async throws {
        let remote = try WebDAVStore()
        let location = try RemoteLocation.parse(remote.url, environment: [:])
        let urls = (0..<5).map { "http://origin.test/img/\($0).png" }
        let bodies = urls.indices.map { n in (0..<(1000 + n * 333)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ n) } }

        // Host A stores the first four and uploads them.
        let hostA = try Host()
        let uploader = RemoteCache(location: location, fetch: FetchConfiguration())
        for n in 0..<4 {
            try hostA.put(urls[n], bodies[n])
            uploader.upload(key: try CacheKey(url: urls[n]).hex, url: urls[n], from: hostA.store, shareable: { _ in true })
        }
        await uploader.drain()
        #expect(uploader.stats.uploads == 4, "\(uploader.stats)")

        // Host B already has the first; the fifth is in neither cache nor tier.
        let hostB = try Host()
        try hostB.put(urls[0], bodies[0])
        let errors = Locked<[String]>([])
        let tier = RemoteCache(location: location, fetch: FetchConfiguration()) { _, message in
            errors.withLock { $0.append(message) }
        }
        let seen = Locked<[String: RemoteCache.PullOutcome]>([:])
        let counts = await tier.pull(Self.sequence(urls), into: hostB.store, jobs: 2) { url, outcome in
            seen.withLock { $0[url] = outcome }
        }
        #expect(counts == RemoteCache.PullCounts(pulled: 3, present: 1, missing: 1))
        #expect(seen.withLock { $0 } == [urls[0]: .present, urls[1]: .pulled, urls[2]: .pulled, urls[3]: .pulled,
                                          urls[4]: .missing])
        for n in 0..<4 { #expect(try hostB.body(urls[n]) == bodies[n], "\(urls[n])") }
        #expect(try hostB.body(urls[4]) == nil)
        #expect(tier.stats.hits == 3 && tier.stats.misses == 1 && tier.stats.errors == 0, "\(tier.stats)")
        #expect(errors.withLock { $0 }.isEmpty)
        // Only the missing ones were asked of the tier: three hits and one 404.
        // nginx logs a request after its response is sent, so the last line can lag the pull.
        var gets = remote.nginx.accessLog().filter { $0.method == "GET" }
        for _ in 0..<100 where gets.count < 4 {
            try await Task.sleep(for: .milliseconds(30))
            gets = remote.nginx.accessLog().filter { $0.method == "GET" }
        }
        #expect(gets.count == 4, "\(gets)")
    }

    @Test func aTierThatIsDownPullsNothing() async throws {
        // A port nothing listens on: every read is a transport failure, never a crash or a hang.
        let location = try RemoteLocation.parse("http://127.0.0.1:9/cache/", environment: [:])
        let host = try Host()
        let tier = RemoteCache(location: location, fetch: FetchConfiguration())
        let urls = (0..<3).map { "http://origin.test/\($0).png" }
        let counts = await tier.pull(Self.sequence(urls), into: host.store, jobs: 1)
        #expect(counts == RemoteCache.PullCounts(pulled: 0, present: 0, missing: 0, failed: 3))
        #expect(tier.stats.readErrors == 3, "\(tier.stats)")
        for url in urls { #expect(try host.body(url) == nil) }
    }

    /// A URL whose own read failed while the tier was still on says so, even
    /// when another read turns the tier off before its outcome is reported
    /// (here all three are reported at the end: `jobs` covers them). Before,
    /// the command line read the tier's state when it printed the line, and
    /// all three said "turned off for this run".
    @Test func aFailedURLSaysWhetherTheTierWasOffWhenItsReadEnded() async throws {
        let location = try RemoteLocation.parse("http://127.0.0.1:9/cache/", environment: [:])
        let host = try Host()
        let tier = RemoteCache(location: location, fetch: FetchConfiguration())
        let urls = (0..<RemoteDefaults.failureLimit).map { "http://origin.test/\($0).png" }
        let seen = Locked<[RemoteCache.PullOutcome]>([])
        let counts = await tier.pull(Self.sequence(urls), into: host.store, jobs: urls.count) { _, outcome in
            seen.withLock { $0.append(outcome) }
        }
        #expect(counts.failed == urls.count && tier.stats.disabled, "\(counts) \(tier.stats)")
        // Each refused connection is counted; the last one in a row turns the tier off.
        let outcomes = seen.withLock { $0 }
        #expect(outcomes.filter { $0 == .failed(turnedOff: false) }.count == urls.count - 1, "\(outcomes)")
        #expect(outcomes.filter { $0 == .failed(turnedOff: true) }.count == 1, "\(outcomes)")
    }
}
