@testable import RemoteCache
import Testing

/// Where `--remote-cache` objects live, and the objects' format.
@Suite struct RemoteLocationTests {
    static let keys = ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"]

    @Test func httpStoresTakeTheKeyAfterTheirPrefix() throws {
        let plain = try RemoteLocation.parse("http://127.0.0.1:8080/cache", environment: [:])
        #expect(plain.objectURL("0123") == "http://127.0.0.1:8080/cache/0123")
        #expect(plain.sigV4 == nil && plain.userPassword == nil)
        let slash = try RemoteLocation.parse("https://store.example/a/b/", environment: [:])
        #expect(slash.objectURL("ff") == "https://store.example/a/b/ff")
        #expect(try RemoteLocation.parse("http://u:pw@h/c/", environment: [:]).display == "http://u:***@h/c/")
    }

    @Test func s3IsPathStyleAgainstAnEndpointAndVirtualHostedOnAWS() throws {
        var env = Self.keys
        env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/"
        let local = try RemoteLocation.parse("s3://bucket/team/img/", environment: env)
        #expect(local.objectURL("abc") == "http://127.0.0.1:9000/bucket/team/img/abc")
        #expect(local.sigV4 == "aws:amz:us-east-1:s3" && local.userPassword == "AKID:secret")
        let bare = try RemoteLocation.parse("s3://bucket", environment: env)
        #expect(bare.objectURL("abc") == "http://127.0.0.1:9000/bucket/abc")

        var aws = Self.keys
        aws["AWS_REGION"] = "eu-west-3"
        aws["AWS_SESSION_TOKEN"] = "tok"
        let remote = try RemoteLocation.parse("s3://bucket/p", environment: aws)
        #expect(remote.objectURL("abc") == "https://bucket.s3.eu-west-3.amazonaws.com/p/abc")
        #expect(remote.sigV4 == "aws:amz:eu-west-3:s3" && remote.sessionToken == "tok")
        let config = remote.fetchConfiguration(from: .init())
        #expect(config.headers["x-amz-security-token"] == "tok" && config.headers["x-amz-content-sha256"] == "UNSIGNED-PAYLOAD")
        #expect(config.retries == 0)
    }

    @Test func badLocationsAreRefused() throws {
        #expect(throws: RemoteCacheError.self) { try RemoteLocation.parse("ftp://x/", environment: [:]) }
        #expect(throws: RemoteCacheError.self) { try RemoteLocation.parse("s3://bucket/p", environment: [:]) }
        #expect(throws: RemoteCacheError.self) { try RemoteLocation.parse("s3:///p", environment: Self.keys) }
        // No host, or a query or fragment the keys would follow.
        for text in ["http://", "https:///prefix/", "http://user:pw@/p/", "http://:8080/p/", "http://h/p?x=1", "http://h/p#f"] {
            #expect(throws: RemoteCacheError.self, "\(text)") { try RemoteLocation.parse(text, environment: [:]) }
        }
        #expect(try RemoteLocation.parse("http://user:pw@h:8080", environment: [:]).base == "http://user:pw@h:8080/")
    }

    /// An S3 prefix (or endpoint) with a `?` or `#` is refused as an http(s) one is: each key
    /// would follow the query or fragment, so every entry would be the one object before it
    /// (`s3://bucket/p?x` read and wrote `bucket/p` for every key). Before, it was taken.
    @Test func anS3LocationWithAQueryOrFragmentIsRefused() throws {
        var env = Self.keys
        env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000"
        for text in ["s3://bucket/p?x=1", "s3://bucket/p#f", "s3://bucket?x", "s3://bucket/a/b#"] {
            let error = try #require(throws: RemoteCacheError.self, "\(text)") { try RemoteLocation.parse(text, environment: env) }
            #expect(error.message.contains("query or fragment"), "\(error.message)")
            #expect(throws: RemoteCacheError.self, "\(text)") { try RemoteLocation.parse(text, environment: Self.keys) }
        }
        env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/?x"
        #expect(throws: RemoteCacheError.self) { try RemoteLocation.parse("s3://bucket/p", environment: env) }
    }

    /// An S3 endpoint that no request can use is named in the message, where the problem is, its
    /// password removed. Before, the message named only `s3://bucket/p` ("invalid URL: expected
    /// scheme://host/path" for an endpoint without its scheme).
    @Test func aBadS3EndpointIsNamedInTheMessage() throws {
        for (name, endpoint, shown) in [("AWS_ENDPOINT_URL", "localhost:9000", "localhost:9000"),
                                        ("AWS_ENDPOINT_URL_S3", "http://u:pw@127.0.0.1:9000/a b", "http://127.0.0.1:9000/a b"),
                                        // No scheme: `redactURL` left this password in the message.
                                        ("AWS_ENDPOINT_URL", "minio:pw@10.0.0.5:9000", "10.0.0.5:9000"),
                                        ("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/?x", "http://127.0.0.1:9000/?x")] {
            var env = Self.keys
            env[name] = endpoint
            let error = try #require(throws: RemoteCacheError.self) { try RemoteLocation.parse("s3://bucket/p", environment: env) }
            #expect(error.message.hasPrefix("--remote-cache s3://bucket/p (\(name) \(shown)): "), "\(error.message)")
            #expect(!error.message.contains("pw"), "\(error.message)")   // (a URL parser reads "minio:" as a scheme)
        }
    }

    /// Credentials or a location that no request could carry are refused
    /// once, here, naming what is wrong: before, every object request failed
    /// as `invalid-url` and the tier warned about each.
    @Test func credentialsAndLocationsNoRequestCanCarryAreRefusedUpFront() throws {
        for name in ["AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"] {
            var env = Self.keys
            env[name] = "abc\n"
            let error = try #require(throws: RemoteCacheError.self) { try RemoteLocation.parse("s3://bucket/p", environment: env) }
            #expect(error.message.contains(name) && error.message.contains("control character") && error.message.contains("byte 4 of 4"),
                    "\(error.message)")
            #expect(!error.message.contains("abc"), "a credential is never printed: \(error.message)")
        }
        var tab = Self.keys
        tab["AWS_SESSION_TOKEN"] = "a\tb"
        #expect(throws: RemoteCacheError.self) { try RemoteLocation.parse("s3://bucket/p", environment: tab) }
        var endpoint = Self.keys
        endpoint["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9000/a b"
        #expect(throws: RemoteCacheError.self) { try RemoteLocation.parse("s3://bucket/p", environment: endpoint) }
        let space = try #require(throws: RemoteCacheError.self) {
            try RemoteLocation.parse("http://u:pw@127.0.0.1:8080/a b/", environment: [:])
        }
        #expect(space.message == "--remote-cache http://u:***@127.0.0.1:8080/a b/: invalid URL: spaces or control characters",
                "\(space.message)")
    }

    @Test func objectsCarryTheirRecordLength() {
        let object = RemoteObject.encode(record: Array("rec".utf8), body: [1, 2])
        #expect(object == Array("asyncfetch-object 1 3\nrec".utf8) + [1, 2])
    }
}
