import DiskCache
import Fetch
import Foundation
import RemoteCache
import Support
import Testing
import TestSupport

/// Uploads refused by a scripted tier on 127.0.0.1, many at once: what the
/// user is told when the run stops uploading.
@Suite(.serialized) struct UploadRefusalTests {
    /// A tier that reads but refuses uploads (a read-only key), sixteen PUTs in flight, all refused at about the same moment: uploads stop at the
    /// `RemoteDefaults.uploadRefusalLimit`-th refusal, and the one warning and the summary's reason
    /// both say that number. Before, the count and the stop were two lock sections apart: a refusal
    /// counted between them reached its own verdict first, and CI's run read "4 uploads in a row refused".
    @Test func theStopWarningNamesTheRefusalThatStoppedTheUploads() async throws {
        for round in 0..<5 {
            let server = try ScriptedServer()
            let temp = try TempDirectory(prefix: "asyncfetch-refused")
            let store = try DiskCacheStore(directory: temp.path + "/cache")
            let warnings = Locked<[String]>([])
            let remote = RemoteCache(location: try RemoteLocation.parse(server.url("/cache/"), environment: [:]),
                                     fetch: FetchConfiguration(), uploads: 16,
                                     onTurnedOff: { message in warnings.withLock { $0.append(message) } })
            // A read answered (a miss: nothing is at that path): the tier works, only its uploads are refused.
            if case .stored = await remote.read(try CacheKey(url: "http://origin.test/missing.png"), into: store) {
                Issue.record("an object was read from a tier that has none")
            }
            for n in 0..<16 {
                let url = "http://origin.test/\(round)/\(n).png"
                let key = try CacheKey(url: url)
                let writer = try store.makeWriter(for: key.hex)
                try [UInt8](repeating: UInt8(n), count: 100).withUnsafeBytes { try writer.append($0) }
                _ = try writer.commit(CacheMetadata(url: key.storedURL, status: 200, requestTime: 1, responseTime: 2,
                                                    headers: [CacheMetadata.Header("Content-Type", "image/png")]))
                server.route("/cache/" + key.hex, .status(403).delayed(0.3))
                remote.upload(key: key.hex, url: url, from: store, shareable: { _ in true })
            }
            await remote.drain()
            let stopped = "\(RemoteDefaults.uploadRefusalLimit) uploads in a row refused (the last: HTTP 403 Forbidden)"
            let seen = warnings.withLock { $0 }
            #expect(seen == ["remote cache \(server.url("/cache/")): \(stopped); nothing more is uploaded in this run, reads go on"],
                    "round \(round): \(seen)")
            #expect(remote.stats.uploadsStopped && remote.stats.reason == stopped, "round \(round): \(remote.stats)")
            server.stop()
        }
    }
}
