import Foundation
import Glibc

/// A listening socket on 127.0.0.1 that never accepts, with its backlog
/// already filled, so a further connection attempt hangs in SYN-SENT.
/// With `fillBacklog: false` connections complete in the kernel and then
/// nothing answers: a TLS handshake that never completes.
public final class FullBacklogListener {
    public let port: Int
    private var fds: [Int32] = []

    public init(fillBacklog: Bool = true) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw POSIXError(.EMFILE) }
        fds.append(listener)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, fillBacklog ? 0 : 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        // Fill the accept queue (backlog 0 admits one); later SYNs are dropped.
        for _ in 0..<(fillBacklog ? 3 : 0) {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard client >= 0 else { continue }
            fds.append(client)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        usleep(50_000)
    }

    deinit { for fd in fds { close(fd) } }
}
