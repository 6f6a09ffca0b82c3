import Foundation
import Glibc
import Testing
import TestSupport

/// SIGKILL at random instants while large bodies stream in slowly, and many
/// processes writing the same entries at once: afterwards every hit is
/// exactly a body the server sent, described by its own metadata, and the
/// leftovers are swept.
@Suite struct CacheCrashTests {
    static let bodySize = 5 * 1024 * 1024

    /// Version `n` of the body: a header naming it, then a byte that differs per version.
    static func body(version: Int) -> [UInt8] {
        var bytes = Array("asyncfetch crash test, version \(version)\n".utf8)
        bytes += [UInt8](repeating: UInt8(truncatingIfNeeded: version &* 37 &+ 1), count: bodySize - bytes.count)
        return bytes
    }

    /// Every request gets a new version, with its ETag; 5 MB trickled over about 0.4 s.
    final class VersionedRoute: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        func response(_ request: RecordedRequest) -> ScriptedResponse {
            let version = lock.withLock { next += 1; return next }
            return ScriptedResponse.ok(CacheCrashTests.body(version: version), contentType: "application/octet-stream",
                                       headers: [("ETag", "\"v\(version)\""), ("Cache-Control", "max-age=3600")])
                .trickled(chunk: 256 * 1024, interval: 0.02)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func killMinus9InALoopNeverLeavesAWrongHit() throws {
        let server = try ScriptedServer()
        let route = VersionedRoute()
        let paths = ["/big/a.bin", "/big/b.bin", "/big/c.bin"]
        for path in paths { server.route(path, handler: route.response) }
        let urls = paths.map { server.url($0) }
        let cli = try CLI()
        var delays: [Double] = []
        for iteration in 0..<20 {
            let url = urls[iteration % urls.count]
            let child = try startProcess(CLI.binary, ["--any", "--refresh", "--timeout", "10", "--retries", "0", url],
                                         environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
            let delay = Double.random(in: 0.05...0.7)
            delays.append(delay)
            usleep(UInt32(delay * 1_000_000))
            child.sendSignal(SIGKILL)
            _ = child.wait()
        }
        // Each run sweeps what the previous killed one left, so end with a kill
        // that surely lands mid-body: its partial file must be swept next.
        let requests = server.totalRequests
        let last = try startProcess(CLI.binary, ["--any", "--refresh", "--timeout", "10", urls[0]],
                                    environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
        #expect(server.waitForRequests(count: requests + 1, timeout: 10))
        usleep(150_000)
        last.sendSignal(SIGKILL)
        _ = last.wait()
        let leftovers = CacheE2E.files(in: cli.cacheDir + "/.tmp")
        try expectEveryHitIsASentBody(cli, urls, context: "after kills at \(delays.map { Int($0 * 1000) }) ms")

        // A body being written has no name (O_TMPFILE): a kill leaves nothing
        // partial. The only possible leftover is a complete file killed between
        // its link into .tmp and its rename, whose record matches it.
        for name in leftovers {
            let path = cli.cacheDir + "/.tmp/" + name
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
            #expect(CacheE2E.metadata(body: path)?["body-length"] == String(size), "\(name) is a partial leftover")
        }

        // The next run that may use the network sweeps what the killed runs left
        // (here it needs none: a fresh hit or one download).
        let sweepRun = try cli.run(["--any", "--timeout", "20", urls[0]])
        #expect(sweepRun.status == 0, "\(sweepRun.stderr)")
        #expect(CacheE2E.files(in: cli.cacheDir + "/.tmp").isEmpty,
                "leftovers of killed runs must be swept (there were \(leftovers.count))")
        let verify = try cli.run(["cache", "verify"])
        #expect(verify.status == 0, "\(verify.stderr)")
        try expectEveryHitIsASentBody(cli, urls, context: "after verify")
        #expect(try cli.run(["cache", "verify"]).stdout.contains(" 0 corrupt removed"))

        // And the cache still works: a normal run fills every entry with a complete body.
        let final = try cli.run(["--any", "--refresh", "--timeout", "20"] + urls)
        #expect(final.status == 0, "\(final.stderr)")
        try expectEveryHitIsASentBody(cli, urls, context: "after a clean run", requireHits: true)
    }

    /// For each URL that is a hit (`cache path` succeeds): the body on disk is
    /// byte for byte the version its metadata's ETag names, and its MD5 is the
    /// metadata's.
    func expectEveryHitIsASentBody(_ cli: CLI, _ urls: [String], context: String, requireHits: Bool = false) throws {
        for url in urls {
            let path = try cli.run(["cache", "path", url])
            if requireHits { #expect(path.status == 0, "\(url) \(context)") }
            guard path.status == 0 else { continue }
            let bodyPath = String(path.stdout.dropLast())
            let meta = try #require(CacheE2E.metadata(body: bodyPath), "\(context)")
            let etag = try #require(meta["h etag"])
            let version = try #require(Int(etag.dropFirst(2).dropLast()), "ETag \(etag)")
            let onDisk = Array(try Data(contentsOf: URL(fileURLWithPath: bodyPath)))
            // A Bool, not the two 5 MB arrays: a failed comparison of arrays makes the test
            // library compute their difference, which takes minutes at this size.
            let isThatVersion = onDisk == Self.body(version: version)
            #expect(isThatVersion, "\(url) \(context): the hit is not version \(version)'s body")
            #expect(meta["body-length"] == String(Self.bodySize))
            #expect(try "xxh3-128 " + CacheE2E.xxh3(file: bodyPath) == meta["body-digest"], "\(url) \(context)")
        }
    }

    @Test(.timeLimit(.minutes(2)), arguments: [2, 4])
    func processesPrefetchingTheSameURLsAtOnceAllSucceed(processes: Int) throws {
        let server = try ScriptedServer()
        let urls = (0..<100).map { server.url("/shared/\($0).bin") }
        for i in 0..<100 {
            server.route("/shared/\(i).bin", .ok(Self.sharedBody(i), contentType: "application/octet-stream"))
        }
        let cli = try CLI()
        let children = try (0..<processes).map { _ in
            try startProcess(CLI.binary, ["--any", "--jobs", "8", "--timeout", "20", "-q"] + urls,
                             environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 60)
        }
        for child in children {
            let result = child.wait()
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        }
        #expect(server.totalRequests >= 100)
        let paths = try cli.run(["cache", "path"] + urls)
        #expect(paths.status == 0, "every entry must be intact: \(paths.stderr)")
        for (i, path) in paths.stdout.split(separator: "\n").enumerated() {
            #expect(Array(try Data(contentsOf: URL(fileURLWithPath: String(path)))) == Self.sharedBody(i))
        }
        let verify = try cli.run(["cache", "verify"])
        #expect(verify.stdout.contains("verified 100 entries: 100 intact, 0 corrupt removed"), "\(verify.stdout)")
        #expect(CacheE2E.files(in: cli.cacheDir + "/.tmp").isEmpty)
    }

    static func sharedBody(_ i: Int) -> [UInt8] {
        Array("shared body \(i)\n".utf8) + [UInt8](repeating: UInt8(i), count: 4096 + 97 * i)
    }
}
