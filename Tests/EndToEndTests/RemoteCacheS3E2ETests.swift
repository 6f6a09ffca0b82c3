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
        #expect(counts?["hits"] as? Int == 0 && counts?["uploads"] as? Int == 0 && counts?["uploadErrors"] as? Int == 5, "\(counts ?? [:])")
        #expect(origin.totalRequests == 10)

        // A bucket that does not exist (a typo): S3 answers 404 to every GET (a miss) and to every PUT. The
        // warning says what the PUT's 404 means. Before, it read "PUT …: HTTP 404 Not Found" alone.
        let typo = try CLI().run(["--remote-cache", "s3://no-such-bucket/team"] + urls, environment: s3.environment())
        #expect(typo.status == 0, "\(typo.stderr)")
        #expect(typo.stderr.contains(": HTTP 404 Not Found (the tier has no bucket or path by that name, so every read is a miss too; "
                                     + "check the bucket and prefix of s3://no-such-bucket/team)"), "\(typo.stderr)")

        // Without credentials, s3:// is a usage error.
        let missing = try CLI().run(["--remote-cache", tier, urls[0]], environment: ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""])
        #expect(missing.status == 2 && missing.stderr.contains("AWS_ACCESS_KEY_ID"), "\(missing.stderr)")
    }
}
