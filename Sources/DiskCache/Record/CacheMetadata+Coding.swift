#if canImport(Glibc)
import Glibc
#endif

/// The metadata line format. Decoding runs on every hit, so it works on the
/// raw bytes: keys are compared in place, numbers parsed without building
/// strings, and only the values a caller reads become `String`s.
///
/// Version 2 (this one) adds `key` and `body-digest <algorithm> <hex>`, and
/// records the body's inode only for a sidecar. Version 1 records (the
/// format before, with `body-md5`) still decode: their digest is an MD5.
extension CacheMetadata {
    static let magic: StaticString = "asyncfetch-meta 2"
    static let magicVersion1: StaticString = "asyncfetch-meta 1"

    public func encoded() -> [UInt8] {
        // `[UInt8](bytes)`: `Array(unsafeUninitializedCapacity:)` looked up the array's generic
        // metadata at run time on every call (~530 instructions a record).
        withEncoded { [UInt8]($0) }
    }

    /// `encoded()`'s bytes, lent to `body` (the store writes them to the
    /// file and needs no array: a 304's record update makes none).
    func withEncoded<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        // Written into one buffer at its final size's bound, on the stack:
        // this runs for every download and every 304, on the hot path.
        // Numbers are written as digits in place (no `String` per field).
        var bound = Self.fixedBound + storedKey.utf8Count + url.utf8.count + storedDigest.utf8Count + (format?.utf8.count ?? 0)
        // A decoded or merged record's headers are written from its lines (a 304 rewrites every record it
        // answers: no `Header` and no string made for them), unless they need invalid UTF-8 repaired.
        var lines: RecordHeaders?
        var headers: [Header] = []
        if case .record(let record) = storedHeaders, record.linesAreASCII {
            lines = record
            bound += record.table + 5 * record.count   // the lines hold every name and value
        } else {
            headers = self.headers   // made once, for a decoded record's
            bound += Self.bound(of: headers)
        }
        bound += Self.bound(of: varyRequest)
        return try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { buffer in
            var out = MetadataWriter(buffer.baseAddress!, capacity: bound)
            out.raw(Self.magic)
            out.raw("\n")
            storedKey.withBytes { out.line("key", bytes: $0) }
            out.line("url", url)
            out.line("status", Int64(status))
            out.line("request-time", time: requestTime)
            out.line("response-time", time: responseTime)
            out.line("stored-time", time: storedAt)
            out.raw(hasBody ? "has-body 1\n" : "has-body 0\n")
            out.line("body-length", bodyLength)
            out.raw("body-digest ")
            out.raw(digestAlgorithm.name)
            out.byte(0x20)
            storedDigest.withBytes { out.value(bytes: $0) }
            out.byte(0x0A)
            if bodyInode != 0 { out.line("body-inode", unsigned: bodyInode) }
            out.line("body-mtime-ns", bodyMtimeNs)
            if let format { out.line("format", format) }
            if let width { out.line("width", Int64(width)) }
            if let height { out.line("height", Int64(height)) }
            if let lines {
                lines.forEachHeader { out.header("h", name: $0, value: $1) }
            } else {
                out.headers("h", headers)
            }
            out.headers("v", varyRequest)
            out.raw("end\n")
            return try body(UnsafeRawBufferPointer(start: buffer.baseAddress, count: out.count))
        }
    }

    /// What `headers` take in a record at most (`h name value\n` each). Read in the
    /// array's buffer: `for header in headers` copied each header out (its two
    /// strings retained, then released; ~200 instructions a header).
    private static func bound(of headers: [Header]) -> Int {
        headers.withUnsafeBufferPointer { list in
            var bound = 0
            for i in list.indices { bound += list[i].name.utf8.count + list[i].valueCount + 5 }
            return bound
        }
    }

    /// What a record takes beyond its strings: the magic, every field name
    /// with its space and newline, the longest number each field can hold
    /// (20 digits and a sign; a time as `Double.description` writes it, at
    /// most 24), and `end`.
    private static let fixedBound = 512

    /// Header values up to this many bytes are made strings at once: a
    /// string this short is held inline (no allocation), cheaper than a
    /// reference to the record's bytes.
    static let longestInlineValue = 15

    /// A header whose value stays bytes of one copy of the record (made at
    /// the first such value): a string is made only if the value is read as
    /// one (see `Header.withValueBytes`). Out of line: inlined, it made
    /// `decode` large enough that its number readers were no longer inlined.
    @inline(never)
    private static func keptHeader(_ name: String, _ value: ByteRun, of bytes: UnsafeRawBufferPointer,
                                   record: inout [UInt8]?) -> Header {
        // `[UInt8](bytes)`: `Array(unsafeUninitializedCapacity:)` looked up
        // the array's generic metadata at run time on every call.
        let copy = record ?? [UInt8](bytes)
        record = copy
        let start = bytes.baseAddress.map { value.base.baseAddress! - $0 } ?? 0
        return Header(name, record: copy, start: start, end: start + value.count)
    }

    /// Parses `encoded()` output; nil for anything else (foreign, partial or
    /// corrupt files are misses, never crashes). The trailing `end` line
    /// proves the file is complete. Unknown keys (a newer writer) are skipped.
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> CacheMetadata? {
        guard case .record(let meta) = decode(bytes, key: nil, url: nil) else { return nil }
        return meta
    }

    /// What `decode(_:key:url:)` found; also what the store's read of a
    /// record on a body found (`DiskCacheStore.readRecord`), which returns
    /// the decoder's answer as it is: one enum, so the record is not moved
    /// from one into another on its way to the entry.
    enum Decoded {
        case record(CacheMetadata)
        /// A complete record of ours, but for another key or URL than expected.
        case mismatch
        /// Not a complete record of ours; from the store also a file without
        /// one (ENODATA, ENOTSUP, ERANGE): a sidecar may describe it.
        case invalid
        /// No file at the body's name (ENOENT); never the decoder's answer.
        case noFile
    }

    /// `decode`, for a lookup that knows the key and (optionally) the URL
    /// the record must name: both are compared in place, and the record's
    /// `key` and `url` are the caller's (its digest, its string: no copies
    /// made per hit). A complete record naming another key or URL is a
    /// `.mismatch`.
    /// `answerOnly` leaves out the body digest (no string made for it; the
    /// record is checked as a whole all the same): see
    /// `DiskCacheStore.lookup(_:accessTime:answerOnly:)`.
    static func decode(_ bytes: UnsafeRawBufferPointer, key expectedKey: MD5.Digest?, url expectedURL: String?,
                       answerOnly: Bool = false) -> Decoded {
        // The header table is filled on the stack as the lines go by (no
        // zeroing, no copy of it until the record's one array).
        withUnsafeTemporaryAllocation(byteCount: RecordHeaders.Table.byteCount, alignment: 4) { table in
            decode(bytes, key: expectedKey, url: expectedURL, answerOnly: answerOnly, headerTable: RecordHeaders.Table(base: table.baseAddress!))
        }
    }

    /// `decode(_:key:url:answerOnly:)`, the headers' table noted in `headerTable`.
    private static func decode(_ bytes: UnsafeRawBufferPointer, key expectedKey: MD5.Digest?, url expectedURL: String?,
                               answerOnly: Bool, headerTable: RecordHeaders.Table) -> Decoded {
        var lines = LineIterator(bytes)
        guard let first = lines.next() else { return .invalid }
        let version1 = first.equals(magicVersion1)
        guard version1 || first.equals(magic) else { return .invalid }
        // The fields are gathered in locals and the record is made once at
        // the end: filling a `CacheMetadata` variable cost two copies of the
        // whole record per hit (each string and array retained, then released).
        var url = "", key = "", status = 0, requestTime = 0.0, responseTime = 0.0, storedAt = 0.0
        var varyRequest: [Header] = []
        // The response headers are read in place (`RecordHeaders`): here
        // they are counted, and where their lines begin and end noted.
        var headerCount = 0, firstHeaderLine = 0, headerLinesEnd = 0
        var hasBody = true, bodyLength: Int64 = 0, bodyDigest = StoredHex.text(""), bodyInode: UInt64 = 0, bodyMtimeNs: Int64 = 0
        var digestAlgorithm: DigestAlgorithm = version1 ? .md5 : .current
        var format: String?, width: Int?, height: Int?
        // One copy of the record, which the longer header values point into.
        var record: [UInt8]?
        var sawURL = false, sawLength = false, sawStored = false, sawEnd = false
        // With an expectation, whether the last `key`/`url` line matched it.
        var keyMatches = false, urlMatches = false
        while let line = lines.next() {
            if sawEnd {
                // Only the empty rest after the final newline may follow `end`.
                guard line.count == 0, lines.atEnd else { return .invalid }
                break
            }
            if line.equals("end") { sawEnd = true; continue }
            guard let space = line.firstSpace() else { return .invalid }
            let name = line.prefix(space)
            let value = line.suffix(from: space + 1)
            switch name.count {
            case 1 where name[0] == 0x68:   // "h"
                let offset = bytes.baseAddress.map { line.base.baseAddress! - $0 } ?? 0
                if headerCount == 0 { firstHeaderLine = offset }
                headerLinesEnd = offset + line.count
                if headerCount < RecordHeaders.Table.capacity { headerTable.note(headerCount, value, at: offset + 2 - firstHeaderLine) }
                headerCount += 1
            case 1 where name[0] == 0x76:   // "v"
                let header: Header
                if let gap = value.firstSpace() {
                    let headerName = value.prefix(gap)
                    let headerValue = value.suffix(from: gap + 1)
                    let storedName = commonHeaderName(headerName) ?? headerName.string
                    if let common = commonImageType(headerValue) {
                        header = Header(storedName, common)
                    } else if headerValue.count > Self.longestInlineValue && headerValue.isASCII {
                        header = keptHeader(storedName, headerValue, of: bytes, record: &record)
                    } else {
                        header = Header(storedName, headerValue.string)
                    }
                } else {
                    header = Header(value.string, "")
                }
                varyRequest.append(header)
            case 3 where name.equals("key"):
                if let expectedKey { keyMatches = value.matches(expectedKey) } else { key = value.string }
            case 3 where name.equals("url"):
                if let expectedURL { urlMatches = value.matches(expectedURL) } else { url = value.string }
                sawURL = true
            case 5 where name.equals("width"):
                width = value.integer.flatMap { Int(exactly: $0) }
            case 6 where name.equals("status"):
                guard let v = value.integer, let code = Int(exactly: v) else { return .invalid }
                status = code
            case 6 where name.equals("format"):
                format = commonFormatName(value) ?? value.string
            case 6 where name.equals("height"):
                height = value.integer.flatMap { Int(exactly: $0) }
            case 8 where name.equals("has-body"):
                hasBody = value.equals("1")
            case 8 where name.equals("body-md5") && version1:
                if !answerOnly { bodyDigest = StoredHex(value.base) }
            case 11 where name.equals("body-digest"):
                guard let gap = value.firstIndex(of: 0x20),
                      let algorithm = DigestAlgorithm(value.prefix(gap)) else { return .invalid }
                digestAlgorithm = algorithm
                if !answerOnly { bodyDigest = StoredHex(value.suffix(from: gap + 1).base) }
            case 10 where name.equals("body-inode"):
                guard let v = value.integer, v >= 0 else { return .invalid }
                bodyInode = UInt64(v)
            case 11 where name.equals("body-length"):
                guard let v = value.integer, v >= 0 else { return .invalid }
                bodyLength = v
                sawLength = true
            case 11 where name.equals("stored-time"):
                guard let v = value.double else { return .invalid }
                storedAt = v
                sawStored = true
            case 12 where name.equals("request-time"):
                guard let v = value.double else { return .invalid }
                requestTime = v
            case 13 where name.equals("response-time"):
                guard let v = value.double else { return .invalid }
                responseTime = v
            case 13 where name.equals("body-mtime-ns"):
                guard let v = value.integer else { return .invalid }
                bodyMtimeNs = v
            default:
                continue   // newer fields are ignored, not fatal
            }
        }
        guard sawEnd, sawURL, sawLength else { return .invalid }
        if let expectedURL {
            guard urlMatches else { return .mismatch }
            url = expectedURL
        }
        // The key of a lookup stays the digest it looked up (no string made).
        let storedKey: StoredHex
        if version1 {
            // Records before `key` existed: their key is the MD5 of the URL.
            let digest = MD5.digest(url)
            if let expectedKey, digest != expectedKey { return .mismatch }
            storedKey = StoredHex.digest(digest)
        } else if let expectedKey {
            guard keyMatches else { return .mismatch }
            storedKey = StoredHex.digest(expectedKey)
        } else {
            storedKey = StoredHex.text(key)
        }
        let headerLines = UnsafeRawBufferPointer(rebasing: bytes[firstHeaderLine..<headerLinesEnd])
        let headers: StoredHeaders = headerCount == 0 ? .list([])
            : headerCount <= RecordHeaders.Table.capacity ? .record(RecordHeaders(lines: headerLines, table: headerTable, count: headerCount))
            : .record(RecordHeaders(lines: headerLines, count: headerCount))
        // The strings and arrays are moved into the record (`consume`), and the record into the
        // answer: copied, each was retained and the local released (~330 instructions a hit).
        return .record(CacheMetadata(
            url: consume url, storedKey: storedKey, status: status, requestTime: requestTime, responseTime: responseTime,
            storedAt: sawStored ? storedAt : responseTime, headers: headers, varyRequest: consume varyRequest,
            hasBody: hasBody, bodyLength: bodyLength, bodyDigest: bodyDigest, digestAlgorithm: digestAlgorithm,
            bodyInode: bodyInode, bodyMtimeNs: bodyMtimeNs, format: consume format, width: width, height: height))
    }

    /// Every field given (the decoder's: `storedAt` and `key` as read).
    private init(url: String, storedKey: StoredHex, status: Int, requestTime: Double, responseTime: Double, storedAt: Double,
                 headers: StoredHeaders, varyRequest: [Header], hasBody: Bool, bodyLength: Int64, bodyDigest: StoredHex,
                 digestAlgorithm: DigestAlgorithm, bodyInode: UInt64, bodyMtimeNs: Int64, format: String?,
                 width: Int?, height: Int?) {
        self.url = url
        self.storedKey = storedKey
        self.status = status
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.storedAt = storedAt
        self.storedHeaders = headers
        self.varyRequest = varyRequest
        self.hasBody = hasBody
        self.bodyLength = bodyLength
        self.storedDigest = bodyDigest
        self.digestAlgorithm = digestAlgorithm
        self.bodyInode = bodyInode
        self.bodyMtimeNs = bodyMtimeNs
        self.format = format
        self.width = width
        self.height = height
    }
}

/// The stored header names nearly every record has, as constant strings:
/// a hit then makes no string (and checks no UTF-8) for them.
func commonHeaderName(_ name: ByteRun) -> String? {
    switch name.count {
    case 4 where name.equals("ETag"): return "ETag"
    case 4 where name.equals("Date"): return "Date"
    case 12 where name.equals("Content-Type"): return "Content-Type"
    case 13 where name.equals("Last-Modified"): return "Last-Modified"
    case 13 where name.equals("Cache-Control"): return "Cache-Control"
    default: return nil
    }
}

/// The common image media types (a `Content-Type` value), as constant strings.
func commonImageType(_ value: ByteRun) -> String? {
    switch value.count {
    case 9 where value.equals("image/png"): return "image/png"
    case 9 where value.equals("image/gif"): return "image/gif"
    case 10 where value.equals("image/jpeg"): return "image/jpeg"
    case 10 where value.equals("image/webp"): return "image/webp"
    case 10 where value.equals("image/avif"): return "image/avif"
    default: return nil
    }
}

/// The common `format` names (`ImageFormat.name`), as constant strings.
private func commonFormatName(_ value: ByteRun) -> String? {
    switch value.count {
    case 3 where value.equals("png"): return "png"
    case 3 where value.equals("gif"): return "gif"
    case 4 where value.equals("jpeg"): return "jpeg"
    case 4 where value.equals("webp"): return "webp"
    case 4 where value.equals("avif"): return "avif"
    default: return nil
    }
}

extension DigestAlgorithm {
    /// `rawValue`, as the encoder writes it.
    var name: StaticString {
        switch self {
        case .xxh3: "xxh3-128"
        case .md5: "md5"
        }
    }

    /// The algorithm a record names (`rawValue`), read in place.
    init?(_ name: ByteRun) {
        if name.equals("xxh3-128") {
            self = .xxh3
        } else if name.equals("md5") {
            self = .md5
        } else {
            return nil
        }
    }
}
