import Foundation
import Glibc

/// An S3-compatible server on 127.0.0.1 for the remote cache tier's tests:
/// moto (`moto_server`, installed by `make deps` into `.build/s3-venv`).
///
/// Why moto: it is on PyPI (so `make deps` installs it from a registry the
/// project already uses), starts in about a second, needs no disk set-up,
/// and — once authentication is on — checks SigV4 signatures against the
/// access keys it issued (a wrong secret gets 403 SignatureDoesNotMatch).
/// Authentication is on after `INITIAL_NO_AUTH_ACTION_COUNT` requests; the
/// first seven create a user, its access key, a policy allowing s3:*, a
/// second user allowed only to read (s3:GetObject, s3:ListBucket: moto
/// enforces the policies of the keys it issued), its key and policy, and the
/// bucket, over moto's IAM/S3 API with libcurl's own signing (`curl --aws-sigv4`).
public final class S3Server: @unchecked Sendable {
    public let port: Int
    public let bucket = "asyncfetch-test"
    public private(set) var accessKeyID = ""
    public private(set) var secretAccessKey = ""
    /// A key of the user that may only read (GET an object, list the bucket): its PUTs are refused (403).
    public private(set) var readOnlyKey = (id: "", secret: "")
    private let process: ChildProcess
    public var endpoint: String { "http://127.0.0.1:\(port)" }

    public static var executable: String { Paths.packageRoot + "/.build/s3-venv/bin/moto_server" }

    public init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw TestSupportError.message("moto_server is not installed at \(Self.executable) (run `make deps`)")
        }
        // Started means this moto_server holds the listening socket: another test's server may take
        // the free port before moto binds it (then moto exits, and the next attempt takes another).
        var started: (port: Int, process: ChildProcess)?
        for _ in 0..<3 where started == nil {
            let port = try NginxServer.freePort()
            let process = try ChildProcess(Self.executable, ["-H", "127.0.0.1", "-p", String(port)],
                                           environment: ["INITIAL_NO_AUTH_ACTION_COUNT": "7"])
            if ListenerOwner.waitFor(pid: process.pid, port: port, timeout: 20, gaveUp: { !process.isRunning }) {
                started = (port, process)
            } else {
                process.stop(SIGKILL)
            }
        }
        guard let started else { throw TestSupportError.message("moto_server did not start (3 ports tried)") }
        port = started.port
        process = started.process
        try provision()
    }

    deinit { stop() }

    public func stop() {
        process.stop(SIGKILL)   // moto_server ignores SIGTERM; it keeps nothing on disk
    }

    /// The variables `asyncfetch --remote-cache s3://…` reads (`readOnly`: with the key that may only read).
    public func environment(secret: String? = nil, readOnly: Bool = false) -> [String: String] {
        ["AWS_ACCESS_KEY_ID": readOnly ? readOnlyKey.id : accessKeyID,
         "AWS_SECRET_ACCESS_KEY": secret ?? (readOnly ? readOnlyKey.secret : secretAccessKey),
         "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint]
    }

    /// Keys of the objects in the bucket, via a signed ListObjectsV2.
    public func objectKeys() throws -> [String] {
        let xml = try curl(["--aws-sigv4", "aws:amz:us-east-1:s3", "-u", accessKeyID + ":" + secretAccessKey,
                            "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", endpoint + "/" + bucket + "?list-type=2"])
        return Self.values(of: "Key", in: xml)
    }

    private func provision() throws {
        (accessKeyID, secretAccessKey) = try user("asyncfetch", allowed: #""s3:*""#)
        readOnlyKey = try user("reader", allowed: #"["s3:GetObject","s3:ListBucket"]"#)
        _ = try curl(["-X", "PUT", "--aws-sigv4", "aws:amz:us-east-1:s3", "-u", accessKeyID + ":" + secretAccessKey,
                      "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", endpoint + "/" + bucket])
    }

    /// Creates user `name` with a key and a policy allowing `allowed` (a JSON action or list of them): three requests.
    private func user(_ name: String, allowed: String) throws -> (id: String, secret: String) {
        let iam = ["--aws-sigv4", "aws:amz:us-east-1:iam", "-u", "bootstrap:bootstrap", endpoint + "/"]
        _ = try curl(iam + ["-d", "Action=CreateUser&UserName=\(name)&Version=2010-05-08"])
        let key = try curl(iam + ["-d", "Action=CreateAccessKey&UserName=\(name)&Version=2010-05-08"])
        guard let id = Self.values(of: "AccessKeyId", in: key).first,
              let secret = Self.values(of: "SecretAccessKey", in: key).first else {
            throw TestSupportError.message("moto: no access key in \(key)")
        }
        let policy = #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"# + allowed + #","Resource":"*"}]}"#
        _ = try curl(iam + ["--data-urlencode", "PolicyDocument=" + policy,
                            "-d", "Action=PutUserPolicy&UserName=\(name)&PolicyName=s3&Version=2010-05-08"])
        return (id, secret)
    }

    private func curl(_ arguments: [String]) throws -> String {
        let result = try runProcess("/usr/bin/curl", ["-sS", "--fail-with-body"] + arguments)
        guard result.status == 0 else {
            throw TestSupportError.message("curl \(arguments.last ?? ""): \(result.stderr) \(result.stdout)")
        }
        return result.stdout
    }

    static func values(of tag: String, in xml: String) -> [String] {
        xml.components(separatedBy: "<" + tag + ">").dropFirst().compactMap { $0.components(separatedBy: "</" + tag + ">").first }
    }
}
