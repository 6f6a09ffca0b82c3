import Foundation
import Glibc

/// A TCP relay on 127.0.0.1 to another local port that holds every new
/// connection `delay` seconds before it passes anything on: the TCP
/// connection is made at once (the kernel accepts it), and the first byte
/// back comes after the delay. In front of a TLS server it is a host whose
/// handshake is slow but completes.
///
/// One accept thread plus one thread per connection. `stop()` (also run by
/// deinit) ends every connection; a connection still in its delay ends
/// when the delay is over.
public final class DelayingProxy: @unchecked Sendable {
    public let port: Int
    private let core: Core

    public init(to targetPort: Int, delay: Double) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError.posix("socket", errno) }
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let e = errno
            tsClose(fd)
            throw TestSupportError.posix("bind/listen", e)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        core = Core(listener: fd, targetPort: targetPort, delay: delay)
        try core.start()
    }

    deinit { core.stop() }

    /// Connections accepted so far.
    public var connections: Int { core.accepted }

    /// Closes the listener and ends every connection; joins the accept thread. Idempotent.
    public func stop() { core.stop() }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    private final class Core: @unchecked Sendable {
        private let listener: Int32
        private let targetPort: Int
        private let delay: Double
        private let lock = TSMutex()
        // Under `lock`.
        private var stopped = false
        private var count = 0
        private var open: Set<Int32> = []
        private var acceptThread: pthread_t?

        init(listener: Int32, targetPort: Int, delay: Double) {
            self.listener = listener
            self.targetPort = targetPort
            self.delay = delay
        }

        var accepted: Int { lock.withLock { count } }

        func start() throws {
            guard let thread = tsSpawnThread({ [self] in acceptLoop() }) else {
                tsClose(listener)
                throw TestSupportError.message("DelayingProxy: could not start the accept thread")
            }
            lock.withLock { acceptThread = thread }
        }

        func stop() {
            let thread = lock.withLock { () -> pthread_t? in
                if stopped { return nil }
                stopped = true
                defer { acceptThread = nil }
                return acceptThread
            }
            guard let thread else { return }
            _ = shutdown(listener, Int32(SHUT_RDWR))   // wakes `accept`
            tsJoinThread(thread)
            tsClose(listener)
            // Each connection's thread closes its own descriptors, after taking them out of `open`:
            // under the lock, every one still there is open.
            lock.withLock {
                for fd in open { _ = shutdown(fd, Int32(SHUT_RDWR)) }
            }
        }

        private func acceptLoop() {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                let admitted = lock.withLock { () -> Bool in
                    guard !stopped else { return false }
                    count += 1
                    open.insert(client)
                    return true
                }
                guard admitted, let thread = tsSpawnThread({ [self] in relay(client) }) else {
                    forget(client)
                    return
                }
                pthread_detach(thread)
            }
        }

        /// Waits `delay`, connects to the target and copies both ways until either side closes.
        private func relay(_ client: Int32) {
            usleep(UInt32(delay * 1_000_000))
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            defer {
                forget(client)
                tsClose(upstream)
            }
            guard upstream >= 0, lock.withLock({ !stopped }) else { return }
            var address = DelayingProxy.loopback(port: targetPort)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { return }
            var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while poll(&fds, 2, -1) >= 0 {
                for (index, entry) in fds.enumerated() where entry.revents != 0 {
                    let from = entry.fd, to = index == 0 ? upstream : client
                    let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
                    guard n > 0, Self.writeAll(to, buffer, n) else { return }
                }
            }
        }

        /// `send` with MSG_NOSIGNAL: a side that has gone away is EPIPE here, not a SIGPIPE, which
        /// this process leaves at its default (the end of the whole test run).
        private static func writeAll(_ fd: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
            var written = 0
            while written < count {
                let n = buffer.withUnsafeBytes { send(fd, $0.baseAddress! + written, count - written, Int32(MSG_NOSIGNAL)) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                written += n
            }
            return true
        }

        private func forget(_ fd: Int32) {
            lock.withLock { _ = open.remove(fd) }
            tsClose(fd)
        }
    }
}
