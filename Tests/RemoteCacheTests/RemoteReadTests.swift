import DiskCache
import Fetch
import Foundation
import RemoteCache
import Support
import Testing
import TestSupport

/// `RemoteCache.read` against a scripted tier on 127.0.0.1 that gets it
/// wrong, as a user would see it: the outcome, the counts, and the message
/// `-v` prints for each error (`onError`).
@Suite(.serialized) struct RemoteReadTests {
    /// A tier at `/cache/` on `server`, its messages kept, and a local cache to read into.
    struct Tier {
        let temp: TempDirectory
        let store: DiskCacheStore
        let remote: RemoteCache
        let messages = Locked<[String]>([])
        let key: CacheKey
        let objectURL: String

        init(_ server: ScriptedServer, credentials: String = "", url: String = "http://origin.test/a.png") throws {
            temp = try TempDirectory(prefix: "asyncfetch-read")
            store = try DiskCacheStore(directory: temp.path + "/cache")
            let base = server.url("/cache/").replacingOccurrences(of: "http://", with: "http://" + credentials)
            let kept = messages
            remote = RemoteCache(location: try RemoteLocation.parse(base, environment: [:]), fetch: FetchConfiguration()) { _, message in
                kept.withLock { $0.append(message) }
            }
            key = try CacheKey(url: url)
            objectURL = server.url("/cache/" + key.hex)
        }

        /// Reads the key: whether it was stored, and the messages of that read.
        func read() async -> (stored: Bool, messages: [String]) {
            let before = messages.withLock { $0.count }
            let stored = if case .stored = await remote.read(key, into: store) { true } else { false }
            return (stored, messages.withLock { Array($0[before...]) })
        }
    }

    /// What the tier sent instead of an object is named as that, not as an "I/O error" (the local
    /// disk is fine): a small answer (held in memory) and a large one (streamed) alike. Before,
    /// both read "I/O error: not an asyncfetch object …" / "I/O error: no object header line".
    @Test func junkIsNamedAsWhatTheTierSent() async throws {
        let server = try ScriptedServer()
        let tier = try Tier(server)
        let path = "/cache/" + tier.key.hex
        server.route(path, .ok(Array("<html><body>Welcome to nginx!</body></html>\n".utf8), contentType: "text/html"))
        let small = await tier.read()
        #expect(!small.stored)
        #expect(small.messages == ["remote cache: GET \(tier.objectURL): not an asyncfetch object (header '<html><body>Welcome to nginx!</body></html>')"],
                "\(small.messages)")

        server.route(path, .ok([UInt8](repeating: 0x41, count: 300_000), contentType: "application/octet-stream"))
        let large = await tier.read()
        #expect(!large.stored)
        #expect(large.messages == ["remote cache: GET \(tier.objectURL): no object header line"], "\(large.messages)")
        #expect(tier.remote.stats.readErrors == 2 && !tier.remote.stats.disabled, "\(tier.remote.stats)")
        #expect(tier.store.lookup(tier.key.hex, url: tier.key.storedURL, accessTime: false) == nil)
    }

    /// An S3 tier that answers with a redirect is not followed: libcurl 7.88 drops the signature at
    /// another host but sends it the session token (x-amz-security-token). Before, the host the
    /// redirect named got the GET with the token.
    @Test func aSignedTierIsNotFollowedToAnotherHost() async throws {
        let server = try ScriptedServer()
        let elsewhere = try ScriptedServer()
        elsewhere.route("/taken", .ok([1, 2, 3], contentType: "application/octet-stream"))
        let temp = try TempDirectory(prefix: "asyncfetch-read")
        let store = try DiskCacheStore(directory: temp.path + "/cache")
        let environment = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cret", "AWS_SESSION_TOKEN": "tok3n",
                           "AWS_ENDPOINT_URL": server.url("")]
        let messages = Locked<[String]>([])
        let remote = RemoteCache(location: try RemoteLocation.parse("s3://bucket/p", environment: environment),
                                 fetch: FetchConfiguration()) { _, message in messages.withLock { $0.append(message) } }
        let key = try CacheKey(url: "http://origin.test/a.png")
        let path = "/bucket/p/" + key.hex
        server.route(path, .redirect(to: elsewhere.url("/taken"), status: 307))
        let stored = if case .stored = await remote.read(key, into: store) { true } else { false }
        #expect(!stored)
        #expect(server.requests(path).first?.header("x-amz-security-token") == "tok3n", "the tier itself gets it")
        #expect(elsewhere.requests("/taken").isEmpty, "the redirect's host got \(elsewhere.requests("/taken").count) requests")
        let said = messages.withLock { $0 }
        #expect(said.count == 1 && said[0].contains("answered with a redirect, which a signed S3 request does not follow"), "\(said)")
        #expect(!said.joined().contains("tok3n") && !said.joined().contains("s3cret"))
    }

    /// A tier that refuses (403) or lacks the object (404): the first is an error with its status,
    /// the second a miss with no message. The tier's password is in no message.
    @Test func refusedAndMissingObjectsAreToldApartWithoutThePassword() async throws {
        let server = try ScriptedServer()
        let tier = try Tier(server, credentials: "user:sekrit@")
        let path = "/cache/" + tier.key.hex
        server.route(path, .status(403, body: "Forbidden"))
        let forbidden = await tier.read()
        #expect(!forbidden.stored)
        let shown = tier.objectURL.replacingOccurrences(of: "http://", with: "http://user:***@")
        #expect(forbidden.messages == ["remote cache: GET \(shown): HTTP 403 Forbidden"], "\(forbidden.messages)")
        #expect(server.requests(path).last?.header("Authorization") == "Basic " + Data("user:sekrit".utf8).base64EncodedString())

        server.route(path, .status(404))
        let missing = await tier.read()
        #expect(!missing.stored && missing.messages.isEmpty, "\(missing.messages)")
        let stats = tier.remote.stats
        #expect(stats.misses == 1 && stats.readErrors == 1 && stats.hits == 0, "\(stats)")
        #expect(!tier.messages.withLock { $0 }.contains { $0.contains("sekrit") })
    }

    /// An intact object is stored; the same object announced longer than it is (the connection
    /// closes short) or shorter (the reader gets a cut object) is refused, says why, and stores
    /// nothing; so is one whose body changed under its record.
    @Test func anObjectIsUsedOnlyWhenItArrivesWhole() async throws {
        let entry = try RemoteObjectTests.Entry()
        let server = try ScriptedServer()
        let tier = try Tier(server, url: entry.url)
        let path = "/cache/" + tier.key.hex
        var longer = ScriptedResponse.ok(entry.object, contentType: "application/octet-stream")
        longer.declaredLength = entry.object.count + 100
        var shorter = longer
        shorter.declaredLength = entry.object.count - 100
        var changed = entry.object
        changed[changed.count - 1] ^= 0xFF
        let cases: [(String, ScriptedResponse, String)] = [
            ("announced 100 bytes longer", longer, "network error"),
            ("announced 100 bytes shorter", shorter, "body of 4900 bytes, the record says 5000"),
            ("its last byte changed", .ok(changed, contentType: "application/octet-stream"), "body digest"),
        ]
        for (what, response, reason) in cases {
            server.route(path, response)
            let read = await tier.read()
            #expect(!read.stored, "\(what)")
            #expect(read.messages.count == 1 && read.messages[0].hasPrefix("remote cache: GET \(tier.objectURL): ")
                    && read.messages[0].contains(reason), "\(what): \(read.messages)")
            #expect(tier.store.lookup(tier.key.hex, url: tier.key.storedURL, accessTime: false) == nil, "\(what)")
        }
        server.route(path, .ok(entry.object, contentType: "application/octet-stream"))
        let whole = await tier.read()
        #expect(whole.stored && whole.messages.isEmpty, "\(whole.messages)")
        #expect(try entry.stored(in: tier.store) == entry.body)
        let stats = tier.remote.stats
        #expect(stats.hits == 1 && stats.readErrors == 3 && !stats.disabled, "\(stats)")
    }
    /// An S3 tier's first miss asks whether the bucket exists (`afterMiss`); a miss that comes
    /// meanwhile waits for that answer. Cancelling the waiting read's task ends it at once,
    /// `.unavailable` (SPEC §6), while the probe still runs; cancelling the read that asks stops
    /// the probe, that read is `.unavailable` too, and the miss still waiting asks again (here the
    /// second listing answers 404, and the tier is turned off). Before, the waiting read ended only
    /// when the probe answered (here held 20 s), the asking read came back `.absent`, and a
    /// stopped probe counted as "the bucket exists" for the rest of the run.
    @Test func aCancelEndsAReadWaitingForTheBucketProbe() async throws {
        let server = try ScriptedServer()
        let temp = try TempDirectory(prefix: "asyncfetch-read")
        let store = try DiskCacheStore(directory: temp.path + "/cache")
        let environment = ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cret", "AWS_ENDPOINT_URL": server.url("")]
        let remote = RemoteCache(location: try RemoteLocation.parse("s3://bucket/p", environment: environment),
                                 fetch: FetchConfiguration())
        let listing = ScriptedResponse.ok(Array("<ListBucketResult></ListBucketResult>".utf8), contentType: "application/xml")
        // Objects are not routed: 404, a miss.
        server.route("/bucket/", [listing.delayed(20), .status(404, body: "NoSuchBucket")])
        let keys = try (0..<3).map { try CacheKey(url: "http://origin.test/\($0).png") }
        func waitFor(_ path: String, count: Int) async throws {
            for _ in 0..<500 where server.requestCount(path) < count { try await Task.sleep(for: .milliseconds(10)) }
            try #require(server.requestCount(path) >= count, "\(path): \(server.requestCount(path)) requests")
        }
        func unavailable(_ read: RemoteCache.Read) -> Bool { if case .unavailable = read { true } else { false } }

        let askingEnded = Locked(false)
        let asking = Task {
            let read = await remote.read(keys[0], into: store)
            askingEnded.withLock { $0 = true }
            return read
        }
        try await waitFor("/bucket/", count: 1)
        let waiting = Task { await remote.read(keys[1], into: store) }
        try await waitFor("/bucket/p/" + keys[1].hex, count: 1)
        try await Task.sleep(for: .milliseconds(300))   // its 404 answered: it waits for the listing
        let cancelled = Task { await remote.read(keys[2], into: store) }
        try await waitFor("/bucket/p/" + keys[2].hex, count: 1)
        try await Task.sleep(for: .milliseconds(300))
        cancelled.cancel()
        #expect(unavailable(await cancelled.value))
        #expect(!askingEnded.withLock { $0 } && server.requestCount("/bucket/") == 1, "the probe still runs")

        // The asking read cancelled: it ends, and the read still waiting asks again (404: turned off).
        asking.cancel()
        #expect(unavailable(await asking.value))
        #expect(unavailable(await waiting.value))
        #expect(server.requestCount("/bucket/") == 2, "\(server.requestCount("/bucket/"))")
        #expect(remote.stats.disabled && remote.stats.reason?.hasPrefix("the bucket bucket does not exist") == true, "\(remote.stats)")
    }
}
