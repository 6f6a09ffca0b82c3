import Foundation
import Glibc

/// An in-process, scripted HTTP/1.1 server for fault-injection tests.
///
/// Listens on 127.0.0.1 on an ephemeral port; one accept thread plus one thread per
/// connection; keep-alive and pipelining supported. Routes answer with a scripted sequence of
/// responses (the last one repeats) or with a handler. Unknown paths get 404.
/// Route lookup: exact target (path + query) first, then the path without its query, then the
/// directories registered with `serveDirectory`, longest prefix first.
public final class ScriptedServer: @unchecked Sendable {
    public let port: Int
    private let core: ServerCore

    /// Starts listening right away. Throws if the socket cannot be set up.
    public init() throws {
        core = try ServerCore()
        port = core.port
        try core.start()
    }

    deinit {
        core.stop()
    }

    /// "http://127.0.0.1:PORT"
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// baseURL + path (path should start with "/").
    public func url(_ path: String) -> String { baseURL + path }

    // MARK: Routes

    /// Each request to `path` takes the next response; the last one repeats forever.
    /// `path` may contain a query string to match only that exact target.
    /// Registering a path again replaces the route (and restarts its sequence).
    public func route(_ path: String, _ responses: [ScriptedResponse]) {
        core.setRoute(path, RouteBox(responses: responses.isEmpty ? [.status(404, body: "empty route\n")] : responses))
    }

    /// Convenience for a single response that always repeats.
    public func route(_ path: String, _ response: ScriptedResponse) {
        route(path, [response])
    }

    /// Every connection accepted from now on is closed (FIN) before a byte of it is read: a host
    /// that accepts connections and drops them (over https: in the TLS handshake, whose
    /// ClientHello is drained unread, so no RST follows). `httpsURL` names it for https.
    public var dropsConnections: Bool {
        get { core.dropsConnections }
        set { core.dropsConnections = newValue }
    }

    /// "https://127.0.0.1:PORT" + path: the server speaks no TLS (for `dropsConnections`).
    public func httpsURL(_ path: String) -> String { "https://127.0.0.1:\(port)" + path }

    /// Dynamic route: the handler is called on the connection thread for every request.
    public func route(_ path: String, handler: @escaping @Sendable (RecordedRequest) -> ScriptedResponse) {
        core.setRoute(path, RouteBox(handler: handler))
    }

    /// Removes a route (requests to it then fall through to directories / 404).
    public func removeRoute(_ path: String) {
        core.removeRoute(path)
    }

    /// Serves regular files below `directory` for request paths starting with `prefix`.
    /// Content-Type by extension; 404 for missing files, directories and ".." components.
    /// `headers` are added to every file response (e.g. Cache-Control).
    public func serveDirectory(_ directory: String, at prefix: String = "/", headers: [(String, String)] = []) {
        core.addDirectory(directory, prefix: prefix, headers: headers)
    }

    // MARK: Statistics

    /// Number of requests received for `path`. A `path` containing "?" matches the exact
    /// target; otherwise every target whose path (query ignored) equals `path` counts.
    public func requestCount(_ path: String) -> Int {
        core.withRecorded { $0.lazy.filter { ServerCore.matches($0, path) }.count }
    }

    /// All requests received (any path), in arrival order.
    public var totalRequests: Int { core.stat { $0.totalRequests } }

    /// Requests received for `path` (same matching as `requestCount`), in arrival order.
    public func requests(_ path: String) -> [RecordedRequest] {
        core.withRecorded { $0.filter { ServerCore.matches($0, path) } }
    }

    /// Every request received, in arrival order.
    public var allRequests: [RecordedRequest] { core.withRecorded { $0 } }

    /// Peak number of requests being handled at the same instant
    /// (from the request being read to its last byte being sent).
    public var maxConcurrentRequests: Int { core.stat { $0.maxInFlight } }

    /// Peak number of simultaneously open client connections.
    public var maxConcurrentConnections: Int { core.stat { $0.maxOpenConnections } }

    /// Number of TCP connections accepted so far.
    public var connectionsAccepted: Int { core.stat { $0.connectionsAccepted } }

    /// Connections currently open.
    public var openConnections: Int { core.stat { $0.openConnections } }

    /// Requests currently being handled.
    public var requestsInFlight: Int { core.stat { $0.inFlight } }

    /// Forgets recorded requests and resets all counters (peaks restart from the current values).
    public func resetStatistics() {
        core.resetStatistics()
    }

    /// Waits until `requestCount(path) >= count` (any path when `path` is nil). Returns false on timeout.
    @discardableResult
    public func waitForRequests(_ path: String? = nil, count: Int = 1, timeout: Double = 10) -> Bool {
        let deadline = tsMonotonicNow() + timeout
        while true {
            let n = path.map { requestCount($0) } ?? totalRequests
            if n >= count { return true }
            if tsMonotonicNow() >= deadline { return false }
            usleep(5_000)
        }
    }

    /// Closes the listener and all connections and joins every thread. Idempotent; also run by deinit.
    /// Pending delays/trickles wake up immediately.
    public func stop() {
        core.stop()
    }

    /// An HTTP date (the `Date` header's form) for `seconds` since 1970, now by default.
    public static func httpDate(_ seconds: time_t = time(nil)) -> String {
        var t = seconds
        var tmv = tm()
        gmtime_r(&t, &tmv)
        var buf = [CChar](repeating: 0, count: 64)
        let n = strftime(&buf, buf.count, "%a, %d %b %Y %H:%M:%S GMT", &tmv)
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

// MARK: - Implementation

final class RouteBox: @unchecked Sendable {
    // Mutated only under ServerCore.lock.
    var responses: [ScriptedResponse]
    var next = 0
    let handler: (@Sendable (RecordedRequest) -> ScriptedResponse)?

    init(responses: [ScriptedResponse]) {
        self.responses = responses
        self.handler = nil
    }

    init(handler: @escaping @Sendable (RecordedRequest) -> ScriptedResponse) {
        self.responses = []
        self.handler = handler
    }
}

struct ServerStats {
    var totalRequests = 0
    var inFlight = 0
    var maxInFlight = 0
    var openConnections = 0
    var maxOpenConnections = 0
    var connectionsAccepted = 0
}

struct StaticDirectory {
    let prefix: String  // always starts and ends with "/"
    let directory: String
    let headers: [(String, String)]
}

final class ServerCore: @unchecked Sendable {
    let port: Int
    private let listenFD: Int32
    private let wake: TSWakePipe
    private let lock = TSMutex()

    // All below protected by `lock`.
    private var stopped = false
    private var dropping = false
    private var routes: [String: RouteBox] = [:]
    private var directories: [StaticDirectory] = []
    private var recorded: [RecordedRequest] = []
    private var stats = ServerStats()
    private var nextConnectionID = 0
    private var activeFDs: [Int: Int32] = [:]
    private var threads: [Int: pthread_t] = [:]
    private var finished: [Int] = []
    private var acceptThread: pthread_t?

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        if fd < 0 { throw TestSupportError.posix("socket", errno) }
        var one: Int32 = 1
        if setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            let e = errno
            tsClose(fd)
            throw TestSupportError.posix("setsockopt(SO_REUSEADDR)", e)
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if bound != 0 {
            let e = errno
            tsClose(fd)
            throw TestSupportError.posix("bind", e)
        }
        if listen(fd, 1024) != 0 {
            let e = errno
            tsClose(fd)
            throw TestSupportError.posix("listen", e)
        }
        var actual = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        if named != 0 {
            let e = errno
            tsClose(fd)
            throw TestSupportError.posix("getsockname", e)
        }
        do {
            wake = try TSWakePipe()
        } catch {
            tsClose(fd)
            throw error
        }
        listenFD = fd
        port = Int(UInt16(bigEndian: actual.sin_port))
    }

    func start() throws {
        guard let thread = tsSpawnThread({ [self] in acceptLoop() }) else {
            stop()
            throw TestSupportError.message("ScriptedServer: could not start the accept thread")
        }
        lock.withLock { acceptThread = thread }
    }

    // MARK: configuration / statistics

    func setRoute(_ path: String, _ box: RouteBox) {
        lock.withLock { routes[path] = box }
    }

    func removeRoute(_ path: String) {
        lock.withLock { _ = routes.removeValue(forKey: path) }
    }

    func addDirectory(_ directory: String, prefix: String, headers: [(String, String)]) {
        var p = prefix.hasPrefix("/") ? prefix : "/" + prefix
        if !p.hasSuffix("/") { p += "/" }
        let entry = StaticDirectory(prefix: p, directory: directory, headers: headers)
        lock.withLock {
            directories.removeAll { $0.prefix == p }
            directories.append(entry)
            directories.sort { $0.prefix.count > $1.prefix.count }
        }
    }

    func withRecorded<T>(_ body: ([RecordedRequest]) -> T) -> T {
        lock.withLock { body(recorded) }
    }

    func stat<T>(_ body: (ServerStats) -> T) -> T {
        lock.withLock { body(stats) }
    }

    func resetStatistics() {
        lock.withLock {
            recorded.removeAll()
            stats.totalRequests = 0
            stats.connectionsAccepted = 0
            stats.maxInFlight = stats.inFlight
            stats.maxOpenConnections = stats.openConnections
        }
    }

    static func matches(_ request: RecordedRequest, _ path: String) -> Bool {
        if path.contains("?") { return request.path == path }
        return request.pathWithoutQuery == path
    }

    // MARK: lifecycle

    func stop() {
        let first: Bool = lock.withLock {
            if stopped { return false }
            stopped = true
            return true
        }
        guard first else { return }
        wake.fire()
        let me = pthread_self()
        let accept: pthread_t? = lock.withLock {
            let t = acceptThread
            acceptThread = nil
            return t
        }
        if let accept, pthread_equal(accept, me) == 0 {
            tsJoinThread(accept)
        }
        let toJoin: [pthread_t] = lock.withLock {
            tsClose(listenFD)
            for fd in activeFDs.values {
                _ = shutdown(fd, Int32(SHUT_RDWR))
            }
            let all = Array(threads.values)
            threads.removeAll()
            finished.removeAll()
            return all
        }
        var joinedAll = true
        for t in toJoin {
            if pthread_equal(t, me) != 0 {
                joinedAll = false  // stop() called from a handler: a thread cannot join itself
                continue
            }
            tsJoinThread(t)
        }
        if joinedAll { wake.close() }
    }

    private func acceptLoop() {
        var fds = [
            pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            let rc = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress!, 2, -1) }
            if rc < 0 {
                if errno == EINTR { continue }
                usleep(1_000)
                continue
            }
            if fds[1].revents != 0 { return }
            if fds[0].revents == 0 { continue }
            // Drain all pending connections.
            while true {
                let fd = tsAcceptCloexec(listenFD)
                if fd < 0 {
                    let e = errno
                    if e == EINTR || e == ECONNABORTED || e == EPROTO { continue }
                    if e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM { usleep(10_000) }
                    break
                }
                var one: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                let id: Int? = lock.withLock {
                    if stopped { return nil }
                    nextConnectionID += 1
                    stats.connectionsAccepted += 1
                    stats.openConnections += 1
                    stats.maxOpenConnections = max(stats.maxOpenConnections, stats.openConnections)
                    activeFDs[nextConnectionID] = fd
                    return nextConnectionID
                }
                guard let id else {
                    tsClose(fd)
                    return
                }
                let thread = tsSpawnThread { [self] in
                    var handler = ConnectionHandler(core: self, fd: fd, connectionID: id, wake: wake)
                    handler.run()
                    connectionFinished(id)
                }
                lock.withLock {
                    if let thread {
                        threads[id] = thread
                    } else {
                        activeFDs.removeValue(forKey: id)
                        stats.openConnections -= 1
                        tsClose(fd)
                    }
                }
                reapFinished()
            }
            reapFinished()
        }
    }

    private func connectionFinished(_ id: Int) {
        lock.withLock {
            if let fd = activeFDs.removeValue(forKey: id) {
                tsClose(fd)
            }
            stats.openConnections -= 1
            if !stopped { finished.append(id) }
        }
    }

    /// Joins connection threads that have ended (called from the accept thread only).
    private func reapFinished() {
        let done: [pthread_t] = lock.withLock {
            var out: [pthread_t] = []
            var keep: [Int] = []
            for id in finished {
                if let t = threads.removeValue(forKey: id) { out.append(t) } else { keep.append(id) }
            }
            finished = keep
            return out
        }
        for t in done { tsJoinThread(t) }
    }

    // MARK: request bookkeeping (called by ConnectionHandler)

    var isStopped: Bool { lock.withLock { stopped } }

    var dropsConnections: Bool {
        get { lock.withLock { dropping } }
        set { lock.withLock { dropping = newValue } }
    }

    func beginRequest(_ request: RecordedRequest) {
        lock.withLock {
            recorded.append(request)
            stats.totalRequests += 1
            stats.inFlight += 1
            stats.maxInFlight = max(stats.maxInFlight, stats.inFlight)
        }
    }

    func endRequest() {
        lock.withLock { stats.inFlight -= 1 }
    }

    private enum Resolution {
        case fixed(ScriptedResponse)
        case handler(@Sendable (RecordedRequest) -> ScriptedResponse)
        case file(StaticDirectory)
        case notFound
    }

    func response(for request: RecordedRequest) -> ScriptedResponse {
        let resolution: Resolution = lock.withLock {
            let box = routes[request.path] ?? routes[request.pathWithoutQuery]
            if let box {
                if let handler = box.handler { return .handler(handler) }
                let index = min(box.next, box.responses.count - 1)
                if box.next < box.responses.count { box.next += 1 }
                return .fixed(box.responses[index])
            }
            let path = request.pathWithoutQuery
            if let dir = directories.first(where: { path.hasPrefix($0.prefix) }) {
                return .file(dir)
            }
            return .notFound
        }
        switch resolution {
        case .fixed(let r): return r
        case .handler(let h): return h(request)
        case .file(let dir): return Self.fileResponse(request, dir)
        case .notFound: return Self.notFound(request)
        }
    }

    static func notFound(_ request: RecordedRequest) -> ScriptedResponse {
        .status(404, body: "404 Not Found: \(request.pathWithoutQuery)\n")
    }

    static func fileResponse(_ request: RecordedRequest, _ dir: StaticDirectory) -> ScriptedResponse {
        let encoded = String(request.pathWithoutQuery.dropFirst(dir.prefix.count))
        let relative = encoded.removingPercentEncoding ?? encoded
        let parts = relative.split(separator: "/", omittingEmptySubsequences: true)
        if parts.isEmpty || parts.contains(where: { $0 == ".." || $0 == "." }) {
            return notFound(request)
        }
        let full = dir.directory + "/" + parts.joined(separator: "/")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue,
            let data = FileManager.default.contents(atPath: full)
        else {
            return notFound(request)
        }
        let ext = (parts.last.map(String.init) ?? "").split(separator: ".").last.map { $0.lowercased() } ?? ""
        return .ok([UInt8](data), contentType: contentType(forExtension: ext), headers: dir.headers)
    }

    static func contentType(forExtension ext: String) -> String {
        switch ext {
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "gif": return "image/gif"
        case "webp": return "image/webp"
        case "bmp": return "image/bmp"
        case "tif", "tiff": return "image/tiff"
        case "ico": return "image/x-icon"
        case "svg": return "image/svg+xml"
        case "avif": return "image/avif"
        case "jxl": return "image/jxl"
        case "html", "htm": return "text/html; charset=utf-8"
        case "txt": return "text/plain; charset=utf-8"
        case "json": return "application/json"
        default: return "application/octet-stream"
        }
    }
}

// MARK: - One connection

private struct ParsedHead {
    let method: String
    let target: String
    let version: String
    let headers: [(name: String, value: String)]
}

private enum ReadOutcome {
    case ok
    case closed  // EOF, error or server stopping
    case tooLarge
    case bad
}

private struct ConnectionHandler {
    let core: ServerCore
    let fd: Int32
    let connectionID: Int
    let wake: TSWakePipe
    var buffer: [UInt8] = []
    var scanFrom = 0

    init(core: ServerCore, fd: Int32, connectionID: Int, wake: TSWakePipe) {
        self.core = core
        self.fd = fd
        self.connectionID = connectionID
        self.wake = wake
    }

    static let maxHeadSize = 1 << 20

    /// The response said to reset the connection (`ScriptedResponse.resetWithoutAnswer`).
    var resets = false

    mutating func run() {
        serve()
        if resets {
            // close() (`connectionFinished`) then sends a RST, not a FIN.
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        } else {
            lingeringClose()
        }
    }

    /// Half-closes (FIN) and drains what the client still sends for a short while, so the final
    /// close() does not turn into a RST that could discard response bytes the client has not read.
    private func lingeringClose() {
        _ = shutdown(fd, Int32(SHUT_WR))
        let deadline = tsMonotonicNow() + 0.25
        var scratch = [UInt8](repeating: 0, count: 16384)
        while true {
            let remaining = deadline - tsMonotonicNow()
            if remaining <= 0 { return }
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0),
            ]
            let rc = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress!, 2, Int32(max(1, remaining * 1000))) }
            if rc < 0 && errno == EINTR { continue }
            if rc <= 0 || fds[1].revents != 0 { return }
            let n = scratch.withUnsafeMutableBytes { raw in
                tsRetryEINTR { recv(fd, raw.baseAddress, raw.count, 0) }
            }
            if n <= 0 { return }
        }
    }

    private mutating func serve() {
        if core.dropsConnections { return }
        var index = 0
        var dropNext = false
        while !core.isStopped {
            var head: ParsedHead?
            switch readHead(&head) {
            case .ok: if dropNext { return }
            case .closed: return
            case .tooLarge:
                sendSimple(431, "request head too large\n")
                return
            case .bad:
                sendSimple(400, "bad request\n")
                return
            }
            guard let head else { return }
            // Body.
            let lowerHeaders = head.headers.map { ($0.name.lowercased(), $0.value) }
            let transferEncoding = lowerHeaders.first { $0.0 == "transfer-encoding" }?.1.lowercased()
            let contentLength = lowerHeaders.first { $0.0 == "content-length" }?.1
            let expectContinue =
                lowerHeaders.first { $0.0 == "expect" }?.1.lowercased() == "100-continue"
            var body: [UInt8] = []
            if let te = transferEncoding, te.contains("chunked") {
                if expectContinue && !sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) { return }
                guard let b = readChunkedBody() else { return }
                body = b
            } else if let cl = contentLength {
                guard let n = Int(cl.trimmingCharacters(in: .whitespaces)), n >= 0 else {
                    sendSimple(400, "bad Content-Length\n")
                    return
                }
                if n > 0 {
                    if expectContinue && !sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) { return }
                    guard let b = readExactly(n) else { return }
                    body = b
                }
            }
            let request = RecordedRequest(
                method: head.method, path: head.target, headers: head.headers, body: body,
                version: head.version, connectionID: connectionID, indexOnConnection: index)
            index += 1

            let connectionHeader = (request.header("Connection") ?? "").lowercased()
            var keepAlive: Bool
            if head.version == "HTTP/1.0" {
                keepAlive = connectionHeader.contains("keep-alive")
            } else {
                keepAlive = !connectionHeader.contains("close")
            }

            core.beginRequest(request)
            let response = core.response(for: request)
            if response.resetWithoutAnswer {
                resets = true
                core.endRequest()
                return
            }
            dropNext = response.dropNextRequest
            let ok = send(response, for: request, keepAlive: &keepAlive)
            core.endRequest()
            if !ok || !keepAlive { return }
        }
    }

    // MARK: reading

    /// Waits for readability; false when the server stops or the peer is gone.
    private func waitReadable() -> Bool {
        var fds = [
            pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wake.readFD, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let rc = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress!, 2, -1) }
            if rc < 0 {
                if errno == EINTR { continue }
                return false
            }
            if fds[1].revents != 0 { return false }
            if fds[0].revents != 0 { return true }
        }
    }

    /// Appends more bytes to `buffer`; false on EOF / error / stop.
    private mutating func fill() -> Bool {
        guard waitReadable() else { return false }
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { raw in
            tsRetryEINTR { recv(fd, raw.baseAddress, raw.count, 0) }
        }
        if n <= 0 { return false }
        buffer.append(contentsOf: chunk[0..<n])
        return true
    }

    private mutating func readHead(_ out: inout ParsedHead?) -> ReadOutcome {
        while true {
            // Skip stray CRLFs between requests (allowed by RFC 9112).
            while buffer.count >= 2 && buffer[0] == 13 && buffer[1] == 10 {
                buffer.removeFirst(2)
                scanFrom = 0
            }
            if let end = findHeadEnd() {
                let headBytes = Array(buffer[0..<end.start])
                buffer.removeFirst(end.start + end.length)
                scanFrom = 0
                guard let parsed = Self.parseHead(headBytes) else { return .bad }
                out = parsed
                return .ok
            }
            if buffer.count > Self.maxHeadSize { return .tooLarge }
            if !fill() { return .closed }
        }
    }

    /// Finds "\r\n\r\n" (or "\n\n"); returns the head length and the terminator length.
    private mutating func findHeadEnd() -> (start: Int, length: Int)? {
        let count = buffer.count
        var i = max(0, scanFrom)
        while i < count {
            if buffer[i] == 10 {
                if i + 1 < count && buffer[i + 1] == 10 { return (i, 2) }
                if i + 2 < count && buffer[i + 1] == 13 && buffer[i + 2] == 10 {
                    // "\n\r\n": the head ends with CRLFCRLF or LF CRLF.
                    if i >= 1 && buffer[i - 1] == 13 { return (i - 1, 4) }
                    return (i, 3)
                }
            }
            i += 1
        }
        scanFrom = max(0, count - 3)
        return nil
    }

    private static func parseHead(_ bytes: [UInt8]) -> ParsedHead? {
        // Split on LF at the byte level ("\r\n" is a single Character in Swift strings).
        var lines = bytes.split(separator: 10, omittingEmptySubsequences: false).map { line -> Substring in
            let trimmed = line.last == 13 ? line.dropLast() : line
            return Substring(String(decoding: trimmed, as: UTF8.self))
        }
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst()
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3 || parts.count == 2 else { return nil }
        let method = String(parts[0])
        var target = String(parts[1])
        let version = parts.count == 3 ? String(parts[2]) : "HTTP/0.9"
        guard version.hasPrefix("HTTP/") else { return nil }
        // Absolute-form (proxy style) target: keep only path + query.
        if target.hasPrefix("http://") || target.hasPrefix("https://"), let scheme = target.range(of: "://") {
            let afterScheme = target[scheme.upperBound...]
            if let slash = afterScheme.firstIndex(of: "/") {
                target = String(afterScheme[slash...])
            } else {
                target = "/"
            }
        }
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            if (line.first == " " || line.first == "\t"), let last = headers.popLast() {
                // Obsolete line folding.
                headers.append((last.name, last.value + " " + line.trimmingCharacters(in: .whitespaces)))
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            headers.append((name, value))
        }
        return ParsedHead(method: method, target: target, version: version, headers: headers)
    }

    private mutating func readExactly(_ n: Int) -> [UInt8]? {
        while buffer.count < n {
            if !fill() { return nil }
        }
        let out = Array(buffer[0..<n])
        buffer.removeFirst(n)
        return out
    }

    private mutating func readLine() -> String? {
        while true {
            if let nl = buffer.firstIndex(of: 10) {
                var lineBytes = Array(buffer[0..<nl])
                buffer.removeFirst(nl + 1)
                if lineBytes.last == 13 { lineBytes.removeLast() }
                return String(decoding: lineBytes, as: UTF8.self)
            }
            if buffer.count > Self.maxHeadSize { return nil }
            if !fill() { return nil }
        }
    }

    private mutating func readChunkedBody() -> [UInt8]? {
        var body: [UInt8] = []
        while true {
            guard let line = readLine() else { return nil }
            let sizeText = line.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else { return nil }
            if size == 0 {
                // Trailers until an empty line.
                while true {
                    guard let trailer = readLine() else { return nil }
                    if trailer.isEmpty { return body }
                }
            }
            guard let data = readExactly(size) else { return nil }
            body.append(contentsOf: data)
            guard let crlf = readLine(), crlf.isEmpty else { return nil }
        }
    }

    // MARK: writing

    /// Sends all bytes; false when the peer is gone (EPIPE/ECONNRESET...) or the server stopped.
    private func sendAll(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { sendAll($0) }
    }

    private func sendAll(_ raw: UnsafeRawBufferPointer) -> Bool {
        guard var p = raw.baseAddress else { return true }
        var remaining = raw.count
        while remaining > 0 {
            let n = Glibc.send(fd, p, remaining, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            if n == 0 { return false }
            p += n
            remaining -= n
        }
        return true
    }

    private func sendSimple(_ status: Int, _ text: String) {
        let body = Array(text.utf8)
        let head =
            "HTTP/1.1 \(status) \(ScriptedResponse.standardReason(status))\r\nContent-Type: text/plain\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        _ = sendAll(Array(head.utf8) + body)
    }

    /// Sends one response. Returns false if the connection broke or the server stopped.
    /// Clears `keepAlive` when the response requires closing the connection.
    private func send(_ response: ScriptedResponse, for request: RecordedRequest, keepAlive: inout Bool) -> Bool {
        if response.delayBeforeHeaders > 0 {
            if !wake.sleep(response.delayBeforeHeaders) { return false }
        }
        if let raw = response.raw {
            keepAlive = false
            return sendAll(raw)
        }
        let status = response.status
        let isHead = request.method.uppercased() == "HEAD"
        let bodyless = (100..<200).contains(status) || status == 204 || status == 304
        let bodyLength = response.generatedBodyLength ?? response.body.count
        let lowerNames = Set(response.headers.map { $0.0.lowercased() })
        let userContentLength = lowerNames.contains("content-length")

        if response.omitContentLength || response.declaredLength != nil || response.closeAfterHeaders
            || response.closeConnection || response.closeAfterBodyBytes != nil
        {
            keepAlive = false
        }

        var head = "HTTP/1.1 \(status) \(response.reason ?? ScriptedResponse.standardReason(status))\r\n"
        if !lowerNames.contains("date") {
            head += "Date: \(ScriptedServer.httpDate())\r\n"
        }
        for (name, value) in response.headers {
            head += "\(name): \(value)\r\n"
        }
        if !userContentLength && !response.omitContentLength && (!bodyless || response.declaredLength != nil) {
            head += "Content-Length: \(response.declaredLength ?? bodyLength)\r\n"
        }
        if !keepAlive && !lowerNames.contains("connection") {
            head += "Connection: close\r\n"
        }
        head += "\r\n"
        let headBytes = Array(head.utf8)

        if response.closeAfterHeaders || isHead || bodyless {
            return sendAll(headBytes)
        }

        let limit = min(bodyLength, max(0, response.closeAfterBodyBytes ?? Int.max))
        let chunkSize: Int
        if let trickle = response.trickle {
            chunkSize = max(1, trickle.chunk)
        } else {
            chunkSize = ScriptedResponse.generatedChunk
        }

        if response.generatedBodyLength == nil && response.trickle == nil && limit <= 256 * 1024 {
            // Small body: one write, no Nagle interplay.
            var all = headBytes
            all.append(contentsOf: response.body[0..<limit])
            return sendAll(all) && stall(response)
        }
        if !sendAll(headBytes) { return false }

        var offset = 0
        while offset < limit {
            if wake.isFired { return false }
            let n = min(chunkSize, limit - offset)
            let ok: Bool
            if response.generatedBodyLength != nil {
                ok = sendGenerated(offset: offset, count: n)
            } else {
                ok = response.body.withUnsafeBytes { raw in
                    sendAll(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + n)]))
                }
            }
            if !ok { return false }
            offset += n
            if let trickle = response.trickle, offset < limit, trickle.interval > 0 {
                if !wake.sleep(trickle.interval) { return false }
            }
        }
        return stall(response)
    }

    /// `stallAfterBody`: false when the server stopped meanwhile.
    private func stall(_ response: ScriptedResponse) -> Bool {
        response.stallAfterBody <= 0 || wake.sleep(response.stallAfterBody)
    }

    /// Sends `count` generated bytes starting at body offset `offset`.
    private func sendGenerated(offset: Int, count: Int) -> Bool {
        let period = ScriptedResponse.generatedPeriod
        let maxChunk = ScriptedResponse.generatedChunk
        var offset = offset
        var remaining = count
        return ScriptedResponse.generatedPattern.withUnsafeBytes { pattern in
            while remaining > 0 {
                let n = min(remaining, maxChunk)
                let start = offset % period
                if !sendAll(UnsafeRawBufferPointer(rebasing: pattern[start..<(start + n)])) { return false }
                offset += n
                remaining -= n
            }
            return true
        }
    }
}
