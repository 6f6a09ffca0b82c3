#if canImport(Glibc)
import Glibc
#endif
import func Support.withUTF8Bytes

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

/// A borrowed run of bytes inside the metadata buffer.
struct ByteRun {
    let base: UnsafeRawBufferPointer

    var count: Int { base.count }
    subscript(i: Int) -> UInt8 { base[i] }

    func firstIndex(of byte: UInt8) -> Int? {
        guard let start = base.baseAddress, base.count > 0,
              let found = memchr(start, Int32(byte), base.count) else { return nil }
        return start.distance(to: UnsafeRawPointer(found))
    }

    /// `firstIndex(of: 0x20)` for a space that is usually near the start
    /// (after a field's or a header's name): the first 16 bytes are looked
    /// at as two words, with no call; only a later space takes `memchr`.
    @inline(__always)
    func firstSpace() -> Int? {
        guard let start = base.baseAddress else { return nil }
        var i = 0
        while i < 16 && i + 8 <= base.count {
            // A zero byte of `word ^ spaces`: the lowest flagged byte is the first space.
            let x = UInt64(littleEndian: start.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ 0x2020_2020_2020_2020
            let found = (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
            if found != 0 { return i + found.trailingZeroBitCount >> 3 }
            i += 8
        }
        return suffix(from: i).firstIndex(of: 0x20).map { $0 + i }
    }

    func prefix(_ n: Int) -> ByteRun { ByteRun(base: UnsafeRawBufferPointer(rebasing: base[0..<n])) }
    func suffix(from i: Int) -> ByteRun { ByteRun(base: UnsafeRawBufferPointer(rebasing: base[i...])) }

    func equals(_ literal: StaticString) -> Bool {
        guard literal.utf8CodeUnitCount == base.count else { return false }
        guard let start = base.baseAddress else { return base.count == 0 }
        return memcmp(start, literal.utf8Start, base.count) == 0
    }

    var string: String { String(decoding: base, as: UTF8.self) }

    /// `equals`, in any ASCII case (a letter of the literal matches either
    /// case; any other byte only itself). The exact spelling first: a
    /// record's names are nearly always written as the literal.
    @inline(__always)
    func equalsIgnoringCase(_ literal: StaticString) -> Bool {
        guard literal.utf8CodeUnitCount == base.count else { return false }
        guard let start = base.baseAddress else { return base.count == 0 }
        if memcmp(start, literal.utf8Start, base.count) == 0 { return true }
        for i in 0..<base.count where base[i] != literal.utf8Start[i] {
            let l = base[i] | 0x20
            guard l == literal.utf8Start[i] | 0x20, l >= 0x61, l <= 0x7A else { return false }
        }
        return true
    }

    /// Whether these bytes are the 32 hex digits of `key` (lowercase, as written).
    /// Compared as four words (`hexWords`), with no buffer of digits.
    func matches(_ key: MD5.Digest) -> Bool {
        guard count == 32, let start = base.baseAddress else { return false }
        let words = key.hexWords()
        return start.loadUnaligned(as: UInt64.self) == words.0
            && start.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == words.1
            && start.loadUnaligned(fromByteOffset: 16, as: UInt64.self) == words.2
            && start.loadUnaligned(fromByteOffset: 24, as: UInt64.self) == words.3
    }

    /// Whether these bytes decode to `text`: compared in place when they
    /// are the same bytes or both plain ASCII (then equal bytes and equal
    /// strings are the same thing); otherwise as strings, as `string == text`.
    func matches(_ text: String) -> Bool {
        // Borrowed bytes (no copy, no retain) for a native string, else a copy.
        let inPlace = withUTF8Bytes(of: text) { expected -> Bool? in
            if expected.count == base.count,
               expected.count == 0 || memcmp(expected.baseAddress!, base.baseAddress!, base.count) == 0 { return true }
            return Self.isASCII(UnsafeRawBufferPointer(expected)) && Self.isASCII(base) ? false : nil
        }
        return inPlace ?? (string == text)
    }

    /// Whether every byte is below 0x80 (a hit asks this of its two dates).
    var isASCII: Bool { Self.isASCII(base) }

    /// Whether every byte of `bytes` is below 0x80: eight bytes at a time.
    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let start = bytes.baseAddress else { return true }
        let count = bytes.count
        var bits: UInt64 = 0, i = 0
        while i + 8 <= count {
            bits |= start.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < count {
            bits |= UInt64(start.load(fromByteOffset: i, as: UInt8.self))
            i += 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    /// A decimal integer with an optional leading `-`; nil on anything else or overflow.
    /// Up to 19 digits (every record's numbers) are read eight at a time
    /// (`digits`) into a `UInt64`, which 19 digits cannot overflow, then
    /// range-checked once; longer runs (leading zeros) take the checked loop.
    var integer: Int64? {
        guard let start = base.baseAddress, count > 0 else { return nil }
        let negative = start.load(as: UInt8.self) == 0x2D
        let first = negative ? 1 : 0
        guard first < count else { return nil }
        guard count - first <= 19 else { return checkedInteger(from: first, negative: negative) }
        var value: UInt64 = 0
        guard Self.digits(start, from: first, to: count, into: &value) == count, value <= UInt64(Int64.max) else { return nil }
        return negative ? -Int64(value) : Int64(value)
    }

    /// `integer` for more than 19 digits, one at a time with overflow checks.
    private func checkedInteger(from first: Int, negative: Bool) -> Int64? {
        var value: Int64 = 0
        for i in first..<count {
            let digit = base[i] &- 0x30
            guard digit <= 9 else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(digit))
            guard !o1 && !o2 else { return nil }
            value = sum
        }
        return negative ? -value : value
    }

    /// Reads the decimal digits from `start + from` up to `end` or the first
    /// other byte into `value` (`value * 10^n + digits`, wrapping: callers
    /// bound the count) and returns where it stopped. Eight bytes that are
    /// all digits are read as one word (`eightDigits`), the rest one by one.
    @inline(__always)
    static func digits(_ start: UnsafeRawPointer, from: Int, to end: Int, into value: inout UInt64) -> Int {
        var i = from
        while i + 8 <= end, let eight = eightDigits(UInt64(littleEndian: start.loadUnaligned(fromByteOffset: i, as: UInt64.self))) {
            value = value &* 100_000_000 &+ eight
            i += 8
        }
        while i < end {
            let digit = start.load(fromByteOffset: i, as: UInt8.self) &- 0x30
            if digit > 9 { break }
            value = value &* 10 &+ UInt64(digit)
            i += 1
        }
        return i
    }

    /// The value of eight ASCII digits (the first in the lowest byte), or
    /// nil when any byte is not one: every byte's high half must be 3 and
    /// stay 3 with 6 added (so 0x30–0x39). Then pairs, fours and the eight
    /// are combined by three multiplications.
    @inline(__always)
    static func eightDigits(_ word: UInt64) -> UInt64? {
        let highs: UInt64 = 0xF0F0_F0F0_F0F0_F0F0, threes: UInt64 = 0x3030_3030_3030_3030
        guard word & highs == threes, (word &+ 0x0606_0606_0606_0606) & highs == threes else { return nil }
        var v = word & 0x0F0F_0F0F_0F0F_0F0F
        v = (v &* (10 << 8 + 1)) >> 8
        v = ((v & 0x00FF_00FF_00FF_00FF) &* (100 << 16 + 1)) >> 16
        return ((v & 0x0000_FFFF_0000_FFFF) &* (10_000 << 32 + 1)) >> 32
    }

    /// `[-]digits[.digits]` whose digits form an integer up to 2^53: exact, or nil.
    /// The integer part and the decimals are read by `digits` (eight at a
    /// time where eight are there): the digits are counted from their
    /// positions, and more than 19 of them (which could overflow) are left
    /// to `strtod`.
    private var simpleDecimal: Double? {
        guard let start = base.baseAddress else { return nil }
        let count = base.count
        if let clock = clockTime(start, count) { return clock }
        var i = 0, negative = false
        if start.load(as: UInt8.self) == 0x2D { negative = true; i = 1 }
        let first = i
        var mantissa: UInt64 = 0
        i = Self.digits(start, from: i, to: count, into: &mantissa)
        let integerDigits = i - first
        guard integerDigits > 0 else { return nil }   // a digit before any point
        var decimals = 0
        if i < count {
            guard start.load(fromByteOffset: i, as: UInt8.self) == 0x2E else { return nil }   // only a point may follow the digits
            let fractionStart = i + 1
            i = Self.digits(start, from: fractionStart, to: count, into: &mantissa)
            guard i == count else { return nil }
            decimals = i - fractionStart
            guard decimals > 0 else { return nil }   // no trailing point
        }
        guard integerDigits + decimals <= 19, decimals <= 15, mantissa <= 1 << 53 else { return nil }
        let value = Double(mantissa) / Self.powerOfTen(decimals)
        return negative ? -value : value
    }

    /// The form every stored time of the clock has (`currentUnixTime`,
    /// seconds from 2001 to 2286): ten digits, a point, one to six decimals.
    /// Read as two words, the same integer and power of ten as the general
    /// loop finds (so the same value): the first eight digits as one word,
    /// the decimals as the last eight bytes, those before the decimals (the
    /// point, digits) made leading zeros. nil for any other form (the general loop's turn).
    @inline(__always)
    private func clockTime(_ start: UnsafeRawPointer, _ count: Int) -> Double? {
        guard count >= 12, count <= 17, start.load(fromByteOffset: 10, as: UInt8.self) == 0x2E,
              let high = Self.eightDigits(UInt64(littleEndian: start.loadUnaligned(as: UInt64.self))) else { return nil }
        let ninth = start.load(fromByteOffset: 8, as: UInt8.self) &- 0x30, tenth = start.load(fromByteOffset: 9, as: UInt8.self) &- 0x30
        guard ninth <= 9, tenth <= 9 else { return nil }
        let decimals = count - 11
        let shift = UInt64(8 * (8 - decimals))
        let last = UInt64(littleEndian: start.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        guard let fraction = Self.eightDigits(last & (UInt64.max << shift) | 0x3030_3030_3030_3030 >> (64 - shift)) else { return nil }
        var mantissa = high &* 100 &+ UInt64(ninth) &* 10 &+ UInt64(tenth)
        for _ in 0..<decimals { mantissa &*= 10 }
        mantissa &+= fraction
        guard mantissa <= 1 << 53 else { return nil }
        return Double(mantissa) / Self.powerOfTen(decimals)
    }

    /// 10^n for n in 0…15, each exactly representable. A switch of
    /// literals, not a global array: three times per hit, an array cost a
    /// lazy-initialisation check and a bounds check each (callgrind: 408
    /// instructions per stored time, with the array).
    private static func powerOfTen(_ n: Int) -> Double {
        switch n {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        default: 1e15
        }
    }

    /// A decimal number as `String(Double)` writes it ("1763779200.25",
    /// "1e-05"): nil unless every byte is consumed. The common form (digits
    /// that make an integer up to 2^53, at most 15 decimals — stored times
    /// with microseconds are) is computed exactly here: such an integer
    /// divided by a power of ten that is itself exact is one correctly
    /// rounded IEEE division, the value `strtod` returns.
    /// Anything else goes to `strtod` from a stack copy (no String built;
    /// Swift programs run in the C locale).
    var double: Double? {
        guard count > 0, count < 64, let start = base.baseAddress else { return nil }
        let first = base[0]
        guard first == 0x2D || (first >= 0x30 && first <= 0x39) else { return nil }   // no spaces, no "nan"/"inf"
        if let quick = simpleDecimal { return quick }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { text -> Double? in
            guard let c = text.baseAddress else { return nil }
            memcpy(c, start, count)
            c[count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(c, &end)
            guard let end, end == c + count, value.isFinite else { return nil }
            return value
        }
    }
}

/// Lines separated by `\n`; the text after the last newline is the final line.
struct LineIterator {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0
    private var finished = false

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool { finished }

    mutating func next() -> ByteRun? {
        guard !finished else { return nil }
        let rest = ByteRun(base: UnsafeRawBufferPointer(rebasing: bytes[position...]))
        if let newline = rest.firstIndex(of: 0x0A) {
            position += newline + 1
            return rest.prefix(newline)
        }
        finished = true
        return rest
    }
}

/// Writes the fields of a metadata file into a buffer the caller allocated
/// at the record's size bound (`CacheMetadata.encoded`).
private struct MetadataWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private(set) var count = 0

    init(_ start: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.start = start
        self.capacity = capacity
    }

    // `byte`, `raw` and `copy` are inlined: out of line, each call (some 33
    // per record) cost ~50 instructions around its store or memcpy.
    @inline(__always)
    mutating func byte(_ byte: UInt8) {
        precondition(count < capacity, "metadata record outgrew its bound")
        start[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func raw(_ text: StaticString) {
        copy(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    private mutating func copy(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count <= capacity - count, "metadata record outgrew its bound")
        if let source = bytes.baseAddress, bytes.count > 0 {
            (start + count).update(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        count += bytes.count
    }

    /// `key value\n`.
    mutating func line(_ key: StaticString, _ text: String) {
        raw(key)
        byte(0x20)
        value(text)
        byte(0x0A)
    }

    /// A value given as its bytes, on one line (as `value`).
    mutating func value(bytes: UnsafeBufferPointer<UInt8>) {
        let first = count
        copy(UnsafeRawBufferPointer(bytes))
        endLine(from: first)
    }

    /// `key value\n`, the value given as its bytes.
    mutating func line(_ key: StaticString, bytes: UnsafeBufferPointer<UInt8>) {
        raw(key)
        byte(0x20)
        let first = count
        copy(UnsafeRawBufferPointer(bytes))
        endLine(from: first)
        byte(0x0A)
    }

    /// `key digits\n`.
    mutating func line(_ key: StaticString, _ number: Int64) {
        raw(key)
        byte(0x20)
        if number < 0 { byte(0x2D) }
        digits(number.magnitude)
        byte(0x0A)
    }

    mutating func line(_ key: StaticString, unsigned number: UInt64) {
        raw(key)
        byte(0x20)
        digits(number)
        byte(0x0A)
    }

    /// `key seconds\n`, exactly as `Double.description` writes it
    /// ("1763779200.25", "1763779200.0"), so that the decoder reads back
    /// this very value. The clock's times (`currentUnixTime`: whole
    /// microseconds) are written as the integer and up to six decimals with
    /// no formatting engine: between 1 and 2^32 seconds, such a value's
    /// digits are its shortest round-trip form, which is what
    /// `description` prints. Any other value goes through `description`.
    mutating func line(_ key: StaticString, time: Double) {
        raw(key)
        byte(0x20)
        let magnitude = time.magnitude
        let micros = (magnitude * 1e6).rounded()
        if magnitude >= 1, magnitude < 4_294_967_296, micros / 1e6 == magnitude {
            let whole = UInt64(micros)
            if time < 0 { byte(0x2D) }
            digits(whole / 1_000_000)
            let fraction = whole % 1_000_000
            if fraction == 0 {
                raw(".0")
            } else {
                // "1" and six places, the "1" made the point, the trailing zeros taken back.
                digits(1_000_000 + fraction)
                start[count - 7] = 0x2E
                while start[count - 1] == 0x30 { count -= 1 }
            }
        } else {
            value(time.description)
        }
        byte(0x0A)
    }

    /// The decimal digits of `number`. The length from a tree of
    /// comparisons (`decimalLength`: four or five, where counting powers of
    /// ten took one multiplication per digit), then two digits per division
    /// by 100, from the last, each pair copied from `pairs` (one load and
    /// one store, where dividing the pair by 10 took a multiplication each).
    private mutating func digits(_ number: UInt64) {
        let length = Self.decimalLength(number)
        precondition(length <= capacity - count, "metadata record outgrew its bound")
        let table = UnsafeRawPointer(Self.pairs.utf8Start)
        var n = number
        var i = count + length
        while n >= 100 {
            let next = n / 100
            let pair = Int(truncatingIfNeeded: n &- next &* 100)
            i -= 2
            UnsafeMutableRawPointer(start + i).storeBytes(of: table.loadUnaligned(fromByteOffset: 2 * pair, as: UInt16.self),
                                                          as: UInt16.self)
            n = next
        }
        let last = Int(truncatingIfNeeded: n)
        if last >= 10 {
            UnsafeMutableRawPointer(start + i - 2).storeBytes(of: table.loadUnaligned(fromByteOffset: 2 * last, as: UInt16.self),
                                                              as: UInt16.self)
        } else {
            start[i - 1] = 0x30 &+ UInt8(truncatingIfNeeded: last)
        }
        count += length
    }

    /// "00" to "99", the two digits of each number below 100 at twice its offset.
    /// (Computed: a stored `static let` would be read through its once-token.)
    private static var pairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
    }

    /// How many decimal digits `number` has, 1 to 20.
    static func decimalLength(_ number: UInt64) -> Int {
        if number < 100_000_000 {
            if number < 10_000 { return number < 100 ? (number < 10 ? 1 : 2) : (number < 1_000 ? 3 : 4) }
            return number < 1_000_000 ? (number < 100_000 ? 5 : 6) : (number < 10_000_000 ? 7 : 8)
        }
        if number < 10_000_000_000_000_000 {
            if number < 1_000_000_000_000 {
                return number < 10_000_000_000 ? (number < 1_000_000_000 ? 9 : 10) : (number < 100_000_000_000 ? 11 : 12)
            }
            return number < 100_000_000_000_000 ? (number < 10_000_000_000_000 ? 13 : 14)
                : (number < 1_000_000_000_000_000 ? 15 : 16)
        }
        return number < 1_000_000_000_000_000_000 ? (number < 100_000_000_000_000_000 ? 17 : 18)
            : (number < 10_000_000_000_000_000_000 ? 19 : 20)
    }

    /// `header` of each of `headers`, read in the array's buffer (no copy of a header).
    mutating func headers(_ key: StaticString, _ headers: [CacheMetadata.Header]) {
        headers.withUnsafeBufferPointer { list in
            for i in list.indices { header(key, list[i]) }
        }
    }

    /// `h Name value\n` (or `v`): a name is one word, its spaces become "-".
    mutating func header(_ key: StaticString, _ header: CacheMetadata.Header) {
        raw(key)
        byte(0x20)
        value(header.name, spaces: 0x2D)
        byte(0x20)
        let first = count
        header.withValueBytes { copy(UnsafeRawBufferPointer($0)) }
        endLine(from: first)
        byte(0x0A)
    }

    /// `header`, the name and value given as their bytes (a record's lines).
    mutating func header(_ key: StaticString, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        raw(key)
        byte(0x20)
        let nameStart = count
        copy(name)
        oneWord(from: nameStart)
        byte(0x20)
        let first = count
        copy(value)
        endLine(from: first)
        byte(0x0A)
    }

    /// A value on one line: CR and LF become spaces (they would start a new
    /// field); with `spaces` given, spaces too become that byte. Copied in
    /// one piece, then patched in place.
    mutating func value(_ text: String, spaces: UInt8 = 0x20) {
        let first = count
        withUTF8Bytes(of: text) { copy(UnsafeRawBufferPointer($0)) }
        if spaces == 0x20 {
            endLine(from: first)
            return
        }
        oneWord(from: first, spaces: spaces)
    }

    /// LF, CR and spaces written since `first` become `spaces` ("-": a header's name is one word).
    private func oneWord(from first: Int, spaces: UInt8 = 0x2D) {
        for i in first..<count {
            let byte = start[i]
            if byte == 0x0A || byte == 0x0D || byte == 0x20 { start[i] = spaces }
        }
    }

    /// CR and LF written since `first` become spaces: spaces stay, and only
    /// CR and LF (rare) are looked for, by memchr. Inlined, as it was when
    /// `value` held it (out of line it cost a 304's rewrite ~330 instructions).
    @inline(__always)
    private func endLine(from first: Int) {
        patch(0x0A, from: first)
        patch(0x0D, from: first)
    }

    /// Every `byte` written since `first` becomes a space.
    private func patch(_ byte: UInt8, from first: Int) {
        var from = first
        while from < count, let found = memchr(start + from, Int32(byte), count - from) {
            let at = found.assumingMemoryBound(to: UInt8.self)
            at.pointee = 0x20
            from = at - start + 1
        }
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
