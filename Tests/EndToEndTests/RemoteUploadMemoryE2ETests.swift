import Foundation
import Testing
import TestSupport

/// Uploads to the remote tier stream each body from its cache file: memory
/// stays flat however large the bodies (SPEC §4), and the objects are whole.
@Suite struct RemoteUploadMemoryE2ETests {
    @Test func largeUploadsKeepMemoryFlat() throws {
        let store = try RemoteCacheE2ETests.Store()
        let origin = try ScriptedServer()
        let size = 24 * 1024 * 1024
        var urls: [String] = []
        for n in 0..<4 {
            var response = ScriptedResponse(status: 200, headers: [("Content-Type", "application/octet-stream"),
                                                                   ("Cache-Control", "max-age=600")])
            response.generatedBodyLength = size
            origin.route("/big/\(n).bin", response)
            urls.append(origin.url("/big/\(n).bin"))
        }
        let cli = try CLI()
        let rss = cli.cache.file("rss")
        let result = try runProcess("/usr/bin/time", ["-f", "%M", "-o", rss, CLI.binary, "--json", "--any",
                                                      "--remote-cache", store.url] + urls,
                                    environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try RemoteCacheE2ETests.json(result)
        let tier = RemoteCacheE2ETests.summary(lines)["remoteCache"] as? [String: Any]
        #expect(tier?["uploads"] as? Int == 4, "\(tier ?? [:])")
        let peakKiB = Int((try String(contentsOfFile: rss, encoding: .utf8)).split(separator: "\n").last ?? "") ?? .max
        #expect(peakKiB < 64 * 1024, "4 uploads of 24 MiB held \(peakKiB) KiB at peak")
        for url in urls {
            let object = try store.objectPath(url)
            let objectSize = (try FileManager.default.attributesOfItem(atPath: object)[.size] as? Int) ?? 0
            #expect(objectSize > size, "the object holds the record and the whole body (\(objectSize) bytes)")
        }
        // A second host takes all four from the tier, checked (length and XXH3-128).
        let second = try CLI()
        let lines2 = try RemoteCacheE2ETests.json(try second.run(["--json", "--any", "--remote-cache", store.url] + urls))
        #expect(Set(RemoteCacheE2ETests.successes(lines2).values) == ["remote"])
    }
}
