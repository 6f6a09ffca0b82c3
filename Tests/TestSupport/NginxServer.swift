import Foundation
import Glibc

/// A real nginx on 127.0.0.1, for tests where real server behaviour matters
/// (ETag / Last-Modified / 304 as nginx does them, TLS, HTTP/2 over ALPN).
///
/// It runs in the foreground as a child process with its own prefix, config,
/// logs and (optionally) a self-signed certificate for 127.0.0.1/localhost,
/// all in a temporary directory; `stop()` (or deinit) ends it.
public final class NginxServer: @unchecked Sendable {
    public let port: Int
    public let tls: Bool
    public let root: String
    /// PEM of the self-signed certificate (with `tls`), for `--cacert`.
    public let certificatePath: String?
    private let work: TempDirectory
    private let process: ChildProcess

    public var baseURL: String { "\(tls ? "https" : "http")://127.0.0.1:\(port)" }
    public func url(_ path: String) -> String { baseURL + path }

    /// - Parameters:
    ///   - root: directory served at `/`.
    ///   - tls: serve HTTPS (HTTP/2 offered by ALPN) with a fresh self-signed certificate.
    ///   - extraConfig: lines added inside `server { }` (e.g. `location /x { add_header Cache-Control "max-age=1"; }`).
    ///   - http2: offer HTTP/2 by ALPN with `tls` (false: HTTPS over HTTP/1.1 only).
    ///   - firstPort: the port tried first (the tests of this helper pass one that is taken);
    ///     otherwise, and on each retry, a free one.
    ///
    /// Started means this nginx holds the listening socket (`ListenerOwner`): a free port
    /// can be taken by another test's server before nginx binds it; then nginx logs the
    /// failed bind, is stopped, and the next attempt takes another port.
    public init(root: String, tls: Bool = false, extraConfig: String = "", http2: Bool = true,
                firstPort: Int? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/nginx") else {
            throw TestSupportError.message("nginx is not installed (run `make deps`)")
        }
        self.root = root
        self.tls = tls
        work = try TempDirectory(prefix: "asyncfetch-nginx")
        try FileManager.default.createDirectory(atPath: work.file("logs"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: work.file("tmp"), withIntermediateDirectories: true)
        var certificate: String?
        var tlsLines = ""
        if tls {
            let cert = work.file("cert.pem"), key = work.file("key.pem")
            let result = try runProcess("/usr/bin/openssl", [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", key, "-out", cert,
            ])
            guard result.status == 0 else { throw TestSupportError.message("openssl req failed: \(result.stderr)") }
            certificate = cert
            tlsLines = "ssl_certificate \(cert);\n        ssl_certificate_key \(key);\n"
        }
        certificatePath = certificate
        var lastError = ""
        for attempt in 0..<5 {
            let port = try attempt == 0 ? firstPort ?? Self.freePort() : Self.freePort()
            let listen = tls ? "listen 127.0.0.1:\(port) ssl\(http2 ? " http2" : "");" : "listen 127.0.0.1:\(port);"
            let config = """
                worker_processes 1;
                daemon off;
                pid \(work.file("nginx.pid"));
                error_log \(work.file("logs/error.log")) warn;
                events { worker_connections 1024; }
                http {
                    include /etc/nginx/mime.types;
                    default_type application/octet-stream;
                    access_log \(work.file("logs/access.log")) combined;
                    client_body_temp_path \(work.file("tmp"));
                    proxy_temp_path \(work.file("tmp"));
                    fastcgi_temp_path \(work.file("tmp"));
                    uwsgi_temp_path \(work.file("tmp"));
                    scgi_temp_path \(work.file("tmp"));
                    keepalive_requests 100000;
                    server {
                        \(listen)
                        \(tlsLines)
                        root \(root);
                        \(extraConfig)
                    }
                }
                """
            try config.write(toFile: work.file("nginx.conf"), atomically: true, encoding: .utf8)
            let errorLog = work.file("logs/error.log")
            try? FileManager.default.removeItem(atPath: errorLog)
            let process = try ChildProcess("/usr/sbin/nginx", ["-p", work.path, "-c", work.file("nginx.conf")])
            let started = ListenerOwner.waitFor(pid: process.pid, port: port, timeout: 10) {
                !process.isRunning || ((try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? "").contains("bind() to")
            }
            if started {
                self.port = port
                self.process = process
                return
            }
            process.stop()
            lastError = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
        }
        throw TestSupportError.message("nginx did not start: \(lastError)")
    }

    deinit { stop() }

    /// SIGTERM, then SIGKILL if nginx is still there 10 s later.
    public func stop() {
        process.stop()
    }

    /// Requests nginx logged (method, path, status), oldest first. nginx
    /// writes the access log after each response, so poll briefly.
    public func accessLog() -> [(method: String, path: String, status: Int)] {
        let text = (try? String(contentsOfFile: work.file("logs/access.log"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            // ... "GET /path HTTP/1.1" 200 ...
            guard let q1 = line.firstIndex(of: "\"") else { return nil }
            let rest = line[line.index(after: q1)...]
            guard let q2 = rest.firstIndex(of: "\"") else { return nil }
            let request = rest[..<q2].split(separator: " ")
            let after = rest[rest.index(after: q2)...].split(separator: " ")
            guard request.count >= 2, let status = after.first.flatMap({ Int($0) }) else { return nil }
            return (String(request[0]), String(request[1]), status)
        }
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError.posix("socket", errno) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw TestSupportError.posix("bind", errno) }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestSupportError.posix("getsockname", errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
