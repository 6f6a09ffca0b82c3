import Foundation
import Glibc

/// Which process listens on a TCP port of 127.0.0.1, from `/proc/net/tcp` and
/// `/proc/<pid>/fd`: the proof that a server a test started is the one on its port.
///
/// A free port is found by binding port 0 and closing the socket, then handed to
/// the server; in between another test's server may take it (then ours fails to
/// bind, and a bare "something accepts connections" wait succeeds on the other
/// server). Waiting for *our* process to hold the listening socket closes that gap.
public enum ListenerOwner {
    /// True when `pid` holds a socket listening on `port` (on 127.0.0.1 or any address).
    public static func holds(pid: pid_t, port: Int) -> Bool {
        let inodes = listeningInodes(port: port)
        guard !inodes.isEmpty,
              let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") else { return false }
        return fds.contains { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                  target.hasPrefix("socket:[") else { return false }
            return inodes.contains(String(target.dropFirst(8).dropLast()))
        }
    }

    /// Polls until `pid` listens on `port` (true), or until `gaveUp` says the
    /// process has failed (exited, logged a bind error) or `timeout` passes (false).
    public static func waitFor(pid: pid_t, port: Int, timeout: Double, gaveUp: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if holds(pid: pid, port: port) { return true }
            if gaveUp() { return false }
            usleep(20_000)
        }
        return false
    }

    /// Inodes of the sockets in state LISTEN (0A) on `port` of 127.0.0.1 or 0.0.0.0.
    static func listeningInodes(port: Int) -> Set<String> {
        guard let table = wholeFile("/proc/net/tcp") else { return [] }
        let suffix = ":" + String(format: "%04X", port)
        var inodes: Set<String> = []
        // "sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ..."
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, fields[3] == "0A", fields[1].hasSuffix(suffix),
                  fields[1].hasPrefix("0100007F") || fields[1].hasPrefix("00000000") else { continue }
            inodes.insert(String(fields[9]))
        }
        return inodes
    }

    /// All of a file of /proc, read until its end. `String(contentsOfFile:)` reads
    /// such a file (its size is 0) once, one page: /proc/net/tcp past about 26
    /// sockets was cut there, and a listener further down was never found.
    static func wholeFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }   // read-only: nothing to lose
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes += chunk[..<n]
        }
    }
}
