/// What the cache knows about one entry, stored beside the body as
/// `<md5>.meta` in a small line format that is cheap to parse (a hit reads
/// it on every run):
///
/// ```
/// asyncfetch-meta 1
/// url https://example.com/a.png
/// status 200
/// …
/// h ETag "abc"            (a stored response header)
/// v Accept image/webp     (a request header named by Vary)
/// ```
public struct CacheMetadata: Sendable, Equatable {
    public var url: String
    public var status: Int
    /// Unix seconds: when the request was sent and the response received (RFC 9111 §4.2.3).
    public var requestTime: Double
    public var responseTime: Double
    /// Stored response headers (Date, ETag, Last-Modified, Cache-Control, Expires, Age, Content-Type, Vary…).
    public var headers: [Header]
    /// Values of the request headers that the response's `Vary` names (lowercased names; missing = empty).
    public var varyRequest: [Header]
    /// False for a remembered 404/410: there is no body file.
    public var hasBody: Bool
    public var bodyLength: Int64
    public var bodyMD5: String
    /// Identity of the body file this metadata describes: a hit requires the
    /// file at the body path to have exactly this inode, size and mtime.
    public var bodyInode: UInt64
    public var bodyMtimeNs: Int64
    /// Image facts read from the head of the body when it was stored.
    public var format: String?
    public var width: Int?
    public var height: Int?

    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) { self.name = name; self.value = value }
    }

    public init(url: String, status: Int, requestTime: Double, responseTime: Double, headers: [Header],
                varyRequest: [Header] = [], hasBody: Bool = true, bodyLength: Int64 = 0, bodyMD5: String = "",
                bodyInode: UInt64 = 0, bodyMtimeNs: Int64 = 0, format: String? = nil, width: Int? = nil, height: Int? = nil) {
        self.url = url
        self.status = status
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.headers = headers
        self.varyRequest = varyRequest
        self.hasBody = hasBody
        self.bodyLength = bodyLength
        self.bodyMD5 = bodyMD5
        self.bodyInode = bodyInode
        self.bodyMtimeNs = bodyMtimeNs
        self.format = format
        self.width = width
        self.height = height
    }

    /// First stored value of a response header (case-insensitive).
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    static let magic = "asyncfetch-meta 1"

    public func encoded() -> [UInt8] {
        var text = Self.magic + "\n"
        func line(_ key: String, _ value: String) { text += key + " " + Self.clean(value) + "\n" }
        line("url", url)
        line("status", String(status))
        line("request-time", String(requestTime))
        line("response-time", String(responseTime))
        line("has-body", hasBody ? "1" : "0")
        line("body-length", String(bodyLength))
        line("body-md5", bodyMD5)
        line("body-inode", String(bodyInode))
        line("body-mtime-ns", String(bodyMtimeNs))
        if let format { line("format", format) }
        if let width { line("width", String(width)) }
        if let height { line("height", String(height)) }
        for header in headers { line("h", Self.clean(header.name) + " " + header.value) }
        for header in varyRequest { line("v", Self.clean(header.name) + " " + header.value) }
        text += "end\n"
        return Array(text.utf8)
    }

    /// Parses `encoded()` output; nil for anything else (foreign, partial or
    /// corrupt files are misses, never crashes). The trailing `end` line
    /// proves the file is complete.
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> CacheMetadata? {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard lines.count >= 3, String(decoding: lines[0], as: UTF8.self) == magic else { return nil }
        if lines.last?.isEmpty == true { lines.removeLast() }
        guard let last = lines.last, String(decoding: last, as: UTF8.self) == "end" else { return nil }
        var meta = CacheMetadata(url: "", status: 0, requestTime: 0, responseTime: 0, headers: [])
        var sawURL = false, sawLength = false
        for line in lines.dropFirst().dropLast() {
            guard let space = line.firstIndex(of: 0x20) else { return nil }
            let key = String(decoding: line[line.startIndex..<space], as: UTF8.self)
            let value = String(decoding: line[(space + 1)...], as: UTF8.self)
            switch key {
            case "url": meta.url = value; sawURL = true
            case "status": guard let v = Int(value) else { return nil }; meta.status = v
            case "request-time": guard let v = Double(value) else { return nil }; meta.requestTime = v
            case "response-time": guard let v = Double(value) else { return nil }; meta.responseTime = v
            case "has-body": meta.hasBody = value == "1"
            case "body-length": guard let v = Int64(value), v >= 0 else { return nil }; meta.bodyLength = v; sawLength = true
            case "body-md5": meta.bodyMD5 = value
            case "body-inode": guard let v = UInt64(value) else { return nil }; meta.bodyInode = v
            case "body-mtime-ns": guard let v = Int64(value) else { return nil }; meta.bodyMtimeNs = v
            case "format": meta.format = value
            case "width": meta.width = Int(value)
            case "height": meta.height = Int(value)
            case "h", "v":
                let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
                let header = Header(String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
                if key == "h" { meta.headers.append(header) } else { meta.varyRequest.append(header) }
            default: continue   // newer fields are ignored, not fatal
            }
        }
        return sawURL && sawLength ? meta : nil
    }

    private static func clean(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else { return value }
        // By scalar: "\r\n" is one Character, equal to neither "\n" nor "\r".
        return String(String.UnicodeScalarView(value.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 }))
    }
}
