import Fetch
import Support

/// Where the remote cache tier lives, parsed from `--remote-cache` /
/// `ASYNCFETCH_REMOTE_CACHE`, and how to talk to it.
///
/// - `http(s)://host/prefix/`: a plain HTTP object store (nginx WebDAV,
///   Apache mod_dav…): GET and PUT of `prefix/<key>`.
/// - `s3://bucket/prefix`: the S3 API, signed by libcurl (CURLOPT_AWS_SIGV4)
///   with `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (and
///   `AWS_SESSION_TOKEN`), in `AWS_REGION`; `AWS_ENDPOINT_URL` (MinIO, Ceph,
///   Garage, R2, a test server) is addressed path-style, `endpoint/bucket/prefix/<key>`.
public struct RemoteLocation: Sendable, Equatable {
    /// The URL every object name is appended to; ends with "/".
    public let base: String
    /// As the user wrote it, without any password (for messages).
    public let display: String
    /// "aws:amz:REGION:s3" for S3.
    public let sigV4: String?
    public let userPassword: String?
    public let sessionToken: String?
    /// S3's bucket, nil for `http(s)://`.
    public let bucket: String?
    /// S3: a listing of at most no key of the bucket (ListObjectsV2,
    /// `max-keys=0`), which answers 404 when the bucket does not exist. Asked
    /// once, at a run's first miss (`RemoteCache`): an object's 404 alone does
    /// not say whether the object or the bucket is missing (S3 says so in the
    /// body, `NoSuchKey` or `NoSuchBucket`, which the transfer engine drops).
    public let bucketProbeURL: String?

    /// The object URL of a cache key (its 32 hex digits).
    public func objectURL(_ key: String) -> String { base + key }

    public static func parse(_ text: String, environment: [String: String]) throws(RemoteCacheError) -> RemoteLocation {
        let lower = text.lowercased()
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            // Each key is appended to the text: `http://` alone asked the host named by the key.
            let authority = text.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" }   // after "scheme://"
            let host = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
            guard !host.isEmpty && !host.hasPrefix(":") else {
                throw .invalidLocation("--remote-cache \(redactURL(text)): no host named")
            }
            let base = text.hasSuffix("/") ? text : text + "/"
            let shown = redactURL(text)
            return try RemoteLocation(base: base, display: shown, sigV4: nil, userPassword: nil, sessionToken: nil,
                                      bucket: nil, bucketProbeURL: nil)
                .checked(shown: shown)
        }
        guard lower.hasPrefix("s3://") else {
            throw .invalidLocation("--remote-cache takes http(s)://host/prefix/ or s3://bucket/prefix, got '\(redactURL(text))'")
        }
        let path = text.dropFirst("s3://".count)
        let bucket = String(path.prefix { $0 != "/" })
        var prefix = String(path.dropFirst(bucket.count)).drop { $0 == "/" }
        while prefix.hasSuffix("/") { prefix.removeLast() }
        guard !bucket.isEmpty else { throw .invalidLocation("--remote-cache \(text): no bucket named") }
        func variable(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        guard let keyID = variable("AWS_ACCESS_KEY_ID"), let secret = variable("AWS_SECRET_ACCESS_KEY") else {
            throw .invalidLocation("--remote-cache \(text) needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        }
        let region = variable("AWS_REGION") ?? variable("AWS_DEFAULT_REGION") ?? RemoteDefaults.awsRegion
        let tail = prefix.isEmpty ? "" : prefix + "/"
        let base: String
        let bucketRoot: String
        // What the checks' messages show: the endpoint too, where a problem with it would be.
        var shown = text
        if let name = ["AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"].first(where: { variable($0) != nil }),
           var endpoint = variable(name) {
            shown += " (\(name) \(urlWithoutUserInfo(endpoint)))"
            while endpoint.hasSuffix("/") { endpoint.removeLast() }
            bucketRoot = endpoint + "/" + bucket + "/"
        } else {
            bucketRoot = "https://" + bucket + ".s3." + region + ".amazonaws.com/"
        }
        base = bucketRoot + tail
        for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"] {
            if let value = variable(name), let offset = value.utf8.firstIndex(where: { $0 < 0x20 || $0 == 0x7F }) {
                let position = value.utf8.distance(from: value.utf8.startIndex, to: offset) + 1
                throw .invalidLocation("--remote-cache \(text): \(name) holds a control character (a line break?) at byte "
                              + "\(position) of \(value.utf8.count), which no request can carry; set it without one")
            }
        }
        return try RemoteLocation(base: base, display: text, sigV4: "aws:amz:" + region + ":s3",
                                  userPassword: keyID + ":" + secret, sessionToken: variable("AWS_SESSION_TOKEN"),
                                  bucket: bucket, bucketProbeURL: bucketRoot + "?list-type=2&max-keys=0")
            .checked(shown: shown)
    }

    /// The location itself, if every request to it can be made: its object
    /// URLs pass `FetchClient.validate`, and each key names an object of its
    /// own. Checked once here, so a tier that could only fail (every object
    /// URL invalid, or every key one object) is a usage error at start-up, as
    /// a missing key is, not one warning per URL. `shown`: the location in
    /// the message (an S3 one with its endpoint, which the problem may be in).
    private func checked(shown: String) throws(RemoteCacheError) -> RemoteLocation {
        // Each key would follow the query or fragment: every entry one object (in a URL, an S3
        // key's `?` or `#` is percent-encoded).
        guard !base.contains("?") && !base.contains("#") else {
            let form = sigV4 == nil ? "http(s)://host/prefix/" : "s3://bucket/prefix and an AWS_ENDPOINT_URL without either"
            throw .invalidLocation("--remote-cache \(shown): a query or fragment would come before each key; give \(form)")
        }
        do {
            try FetchClient.validate(objectURL(String(repeating: "0", count: 32)))
        } catch {
            throw .invalidLocation("--remote-cache \(shown): \(error.message)")
        }
        return self
    }

    /// The transfer settings of the tier's own client: short timeouts, no
    /// retries (the origin is the fallback), signing for S3.
    func fetchConfiguration(from origin: FetchConfiguration) -> FetchConfiguration {
        var config = FetchConfiguration()
        // An object is its header line, its record and the body: room for the first two (none: no limit).
        let overhead = Int64(RemoteDefaults.recordLimit) + 64
        config.maxSize = origin.maxSize > 0 && origin.maxSize <= Int64.max - overhead ? origin.maxSize + overhead : 0
        config.connectTimeout = RemoteDefaults.connectTimeout
        config.timeout = RemoteDefaults.timeout
        config.retries = 0
        config.caFile = origin.caFile
        config.insecure = origin.insecure
        config.userAgent = origin.userAgent
        config.maxConnections = origin.maxConnections + RemoteDefaults.uploads
        config.awsSigV4 = sigV4
        config.userPassword = userPassword
        if sigV4 != nil {
            // S3 wants the payload's hash named; integrity is the object's own XXH3-128 (RemoteObject).
            config.headers.set(name: "x-amz-content-sha256", value: "UNSIGNED-PAYLOAD")
            // A redirect is not followed: libcurl 7.88 would send x-amz-security-token (and every header
            // set here) to whatever host it names, and the signature would not hold there anyway.
            config.maxRedirects = 0
        }
        if let sessionToken { config.headers.set(name: "x-amz-security-token", value: sessionToken) }
        return config
    }
}
