import Foundation
import Testing
import TestSupport

/// `--remote-cache s3://bucket/prefix` against moto on 127.0.0.1 (see
/// `S3Server`): signed with libcurl's CURLOPT_AWS_SIGV4, and refused when
/// the secret is wrong (moto checks the signature).
@Suite(.serialized) struct RemoteCacheS3E2ETests {
    typealias Remote = RemoteCacheE2ETests

    @Test func twoHostsShareABucketAndAWrongKeyIsRefused() throws {
        let s3 = try S3Server()
        let (origin, urls) = try #require(Remote.origin(count: 5))
        let tier = "s3://\(s3.bucket)/team/images"
        let first = try CLI().run(["--json", "--remote-cache", tier] + urls, environment: s3.environment())
        #expect(first.status == 0, "\(first.stderr)")
        let uploaded = Remote.summary(try Remote.json(first))["remoteCache"] as? [String: Any]
        #expect(uploaded?["uploads"] as? Int == 5, "\(first.stderr)")
        let keys = try s3.objectKeys()
        #expect(keys.count == 5 && keys.allSatisfy { $0.hasPrefix("team/images/") && $0.count == "team/images/".count + 32 }, "\(keys)")

        let second = try CLI().run(["--json", "--remote-cache", tier] + urls, environment: s3.environment())
        #expect(second.status == 0, "\(second.stderr)")
        let sources = Remote.successes(try Remote.json(second))
        #expect(sources.count == 5 && Set(sources.values) == ["remote"], "\(sources) \(second.stderr)")
        #expect(origin.totalRequests == 5)

        // A wrong secret: every signed request is refused (403), the origin serves every URL.
        let wrong = try CLI().run(["--json", "-v", "--remote-cache", tier] + urls, environment: s3.environment(secret: "wrong"))
        #expect(wrong.status == 0, "\(wrong.stderr)")
        #expect(Set(Remote.successes(try Remote.json(wrong)).values) == ["network"])
        #expect(wrong.stderr.contains("HTTP 403"), "\(wrong.stderr)")
        let counts = Remote.summary(try Remote.json(wrong))["remoteCache"] as? [String: Any]
        // Turned off at the third upload refused, nothing in the run having worked (before: 5 refused, never turned off).
        #expect(counts?["hits"] as? Int == 0 && counts?["uploads"] as? Int == 0 && counts?["disabled"] as? Bool == true
                && (3...5).contains(counts?["uploadErrors"] as? Int ?? 0), "\(counts ?? [:])")
        #expect(origin.totalRequests == 10)

        // Without credentials, s3:// is a usage error.
        let missing = try CLI().run(["--remote-cache", tier, urls[0]], environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""])
        #expect(missing.status == 2 && missing.stderr.contains("AWS_ACCESS_KEY_ID"), "\(missing.stderr)")
    }

    /// A misspelled bucket: S3 answers 404 (NoSuchBucket) to every GET, a miss, and to every PUT.
    /// At the run's first miss the tier asks once whether the bucket exists, and turns itself off
    /// with a warning that names the bucket; the text summary says so too, and `cache pull` says
    /// so rather than "not in the remote cache" for every URL. Before, the tier was never turned
    /// off: every URL paid a GET and a PUT (40 and 40 here), and pull called each URL missing.
    @Test func aMisspelledBucketIsTurnedOff() throws {
        let s3 = try S3Server()
        let (origin, urls) = try #require(Remote.origin(count: 40))
        let tier = "s3://no-such-bucket/team"
        let off = "asyncfetch: warning: remote cache \(tier): the bucket no-such-bucket does not exist (a listing of it was "
            + "answered HTTP 404 Not Found); not used for the rest of this run"
        let result = try CLI().run(["--json", "--jobs", "4", "--remote-cache", tier] + urls, environment: s3.environment())
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Remote.json(result)
        #expect(Remote.successes(lines).count == 40 && Set(Remote.successes(lines).values) == ["network"])
        #expect(origin.totalRequests == 40)
        let counts = try #require(Remote.summary(lines)["remoteCache"] as? [String: Any])
        #expect(counts["disabled"] as? Bool == true, "\(counts)")
        #expect((counts["reason"] as? String)?.hasPrefix("the bucket no-such-bucket does not exist") == true, "\(counts)")
        let asked = (counts["misses"] as? Int ?? 0) + (counts["readErrors"] as? Int ?? 0) + (counts["uploads"] as? Int ?? 0)
            + (counts["uploadErrors"] as? Int ?? 0)
        #expect(asked < 10, "the tier answered \(asked) reads and uploads for 40 URLs: \(counts)")
        #expect(result.stderr.split(separator: "\n").contains { $0 == off }, "\(result.stderr)")

        // The text summary says it too (the warning may have scrolled away).
        let text = try CLI().run(["--jobs", "4", "--remote-cache", tier] + urls, environment: s3.environment())
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stderr.split(separator: "\n").last?.contains(
            " errors, turned off: the bucket no-such-bucket does not exist (a listing of it was answered HTTP 404 Not Found)") == true,
                "\(text.stderr)")

        // cache pull: not "not in the remote cache" for each URL, but the bucket named, and exit 1. At the
        // default --jobs the misses that come while the bucket is asked wait for its answer (review12a: 5 of
        // them said "not in the remote cache" before the warning).
        let pull = try CLI().run(["cache", "pull", "--remote-cache", tier] + urls, environment: s3.environment())
        #expect(pull.status == 1, "\(pull.stderr)")
        #expect(pull.stderr.split(separator: "\n").contains { $0 == off }, "\(pull.stderr)")
        #expect(!pull.stderr.contains("not in the remote cache"), "\(pull.stderr)")
        // Each URL's line says the tier is off, and sends nobody to -v, which has no error to show (the listing
        // counts none): before, "could not be read (-v shows every remote cache error)", and -v showed nothing more.
        let pulled = pull.stderr.split(separator: "\n").map(String.init)
        #expect(pulled.filter { $0.hasSuffix(": not pulled: the remote cache is turned off for this run") }.count == 40, "\(pull.stderr)")
        #expect(!pull.stderr.contains("-v shows"), "\(pull.stderr)")
        // The last line says why too, and that there is no error for -v to show.
        #expect(pulled.last?.hasPrefix("0 pulled, 0 already cached, 40 not pulled (remote cache: ") == true
                && pulled.last?.hasSuffix(" misses, 0 errors, turned off: the bucket no-such-bucket does not exist "
                                         + "(a listing of it was answered HTTP 404 Not Found))") == true, "\(pull.stderr)")
    }

    /// A read-only key (s3:GetObject and s3:ListBucket: moto refuses its PUTs, 403): the run stops
    /// uploading after `RemoteDefaults.uploadRefusalLimit` refused, with one warning, and goes on
    /// reading: what the bucket holds is a `remote` hit. The first upload error's warning says what
    /// happens to that entry, not that "the origins are used instead". Before, every URL paid its
    /// PUT (40 refused here), and the summary did not say why nothing was uploaded.
    @Test func aReadOnlyKeyStopsUploadingAndGoesOnReading() throws {
        let s3 = try S3Server()
        let (origin, urls) = try #require(Remote.origin(count: 40))
        let tier = "s3://\(s3.bucket)/team"
        // The first 10 URLs are in the bucket (uploaded with the key that may write).
        #expect(try CLI().run(["--remote-cache", tier] + urls.prefix(10), environment: s3.environment()).status == 0)
        #expect(try s3.objectKeys().count == 10)

        let result = try CLI().run(["--json", "--jobs", "4", "--remote-cache", tier] + urls,
                                   environment: s3.environment(readOnly: true))
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try Remote.json(result)
        let sources = Remote.successes(lines)
        #expect(sources.count == 40 && urls.prefix(10).allSatisfy { sources[$0] == "remote" }
                && urls.dropFirst(10).allSatisfy { sources[$0] == "network" }, "\(sources)")
        #expect(origin.totalRequests == 40)
        let counts = try #require(Remote.summary(lines)["remoteCache"] as? [String: Any])
        #expect(counts["disabled"] as? Bool == false && counts["uploadsStopped"] as? Bool == true, "\(counts)")
        #expect(counts["hits"] as? Int == 10 && counts["misses"] as? Int == 30 && counts["uploads"] as? Int == 0, "\(counts)")
        #expect((counts["uploadErrors"] as? Int ?? 99) < 10, "\(counts)")
        #expect(try s3.objectKeys().count == 10)
        let warnings = result.stderr.split(separator: "\n").filter { $0.contains("remote cache") }
        #expect(warnings.count == 2, "\(result.stderr)")
        #expect(warnings.first?.hasSuffix(": HTTP 403 Forbidden (not uploaded: the entry stays in this machine's cache only; "
                                          + "-v shows every remote cache error)") == true, "\(result.stderr)")
        let stopped = "asyncfetch: warning: remote cache \(tier): 3 uploads in a row refused (the last: HTTP 403 Forbidden); "
            + "nothing more is uploaded in this run, reads go on"
        #expect(warnings.last.map(String.init) == stopped, "\(result.stderr)")
        #expect(!result.stderr.contains("origins are used"), "\(result.stderr)")

        // The text summary says why nothing was uploaded.
        let text = try CLI().run(["--remote-cache", tier] + urls.prefix(20), environment: s3.environment(readOnly: true))
        #expect(text.stderr.split(separator: "\n").last?.contains(
            " errors, uploads stopped: 3 uploads in a row refused (the last: HTTP 403 Forbidden)") == true, "\(text.stderr)")
    }
}
