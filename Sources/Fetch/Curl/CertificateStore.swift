import CCurl
import func Support.writeAll
#if canImport(Glibc)
import Glibc
#endif

/// Where the transfers of one client read their trusted CAs from, chosen
/// once when its first transfer loop starts and shared by all its loops.
///
/// Why: Debian's libcurl sets a CA path (`/etc/ssl/certs`), and while one is
/// set libcurl 7.88 builds the CA store afresh for every new TLS connection:
/// it re-reads and parses the whole system bundle, about 25 ms of CPU and
/// several MB each (FACTS.md, "TLS to many hosts"). With `CURLOPT_CAPATH`
/// NULL and `CURLOPT_CAINFO` one file, the store is built once per multi
/// handle (so once per transfer loop) and kept for `CURLOPT_CA_CACHE_TIMEOUT` seconds.
///
/// `--cacert FILE` trusts FILE's CAs *as well as* the system's (as it did
/// when the CA path supplied the system's). Both are written, once per client,
/// into one anonymous in-memory file (`memfd_create`) that libcurl opens as
/// `/proc/self/fd/N`: still one file, so still one cached store, and nothing
/// is left on disk whatever happens to the process. (`CURLOPT_CAINFO_BLOB`
/// would do without the file, but libcurl does not cache a store built from
/// a blob.) When that cannot be set up, or the system bundle is missing,
/// the options stay as they were before: correct, only slower.
///
/// Threading: immutable once made; read by every loop thread of the client.
/// Every `CurlEasy` holds it, so the memfd is closed after the last handle
/// that could open it is gone.
final class CertificateStore: Sendable {
    /// The file for CURLOPT_CAINFO, or nil to leave libcurl's own setting.
    let caInfo: String?
    /// Whether CURLOPT_CAPATH is set to NULL (only when `caInfo` holds every trusted CA).
    let clearsCAPath: Bool
    /// The memfd behind `caInfo`, or -1.
    private let descriptor: Int32

    init(_ config: FetchConfiguration) {
        let system = config.systemCABundle.flatMap { access($0, R_OK) == 0 ? $0 : nil }
        switch (config.insecure, system, config.caFile) {
        case (true, _, let extra):
            // Nothing is verified: no store is built at all.
            (caInfo, clearsCAPath, descriptor) = (extra, false, -1)
        case (false, nil, let extra):
            (caInfo, clearsCAPath, descriptor) = (extra, false, -1)
        case (false, let system?, nil):
            (caInfo, clearsCAPath, descriptor) = (system, true, -1)
        case (false, let system?, let extra?):
            if let fd = Self.combine([system, extra]) {
                (caInfo, clearsCAPath, descriptor) = ("/proc/self/fd/\(fd)", true, fd)
            } else {
                (caInfo, clearsCAPath, descriptor) = (extra, false, -1)
            }
        }
    }

    deinit {
        if descriptor >= 0 { _ = close(descriptor) }   // a memfd: nothing to lose
    }

    /// The bundles one after the other in a new memfd; nil when any step fails.
    private static func combine(_ paths: [String]) -> Int32? {
        let fd = ccurl_memfd("asyncfetch-ca-bundle")
        guard fd >= 0 else { return nil }
        for path in paths {
            guard var bytes = readWhole(path) else {
                _ = close(fd)
                return nil
            }
            bytes.append(0x0A)   // a bundle whose last line lacks its newline must not merge with the next
            guard bytes.withUnsafeBytes({ writeAll(fd, $0) }) == nil else {
                _ = close(fd)
                return nil
            }
        }
        return fd
    }

    private static func readWhole(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }   // read-only
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return bytes }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            bytes.append(contentsOf: buffer[0..<n])
        }
    }
}
