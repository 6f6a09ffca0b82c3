#if canImport(Glibc)
import Glibc
#endif

extension HTTPHeaders {
    /// Parses a response's header block as libcurl hands it over: a status
    /// line, then "Name: value" lines ending in CRLF (or LF), then a blank
    /// line. Lines without a colon (status lines, the blank line) are skipped;
    /// folded continuation lines (obsolete, RFC 9112 §5.2) are joined to the
    /// field before them.
    public init(parsing block: [UInt8]) {
        var fields: [Field] = []
        // Once per response: newlines and colons are found by memchr, and the
        // array is made once for a usual block (a line is at least "a:\r\n").
        fields.reserveCapacity(Swift.min(block.count / 16 + 1, 32))
        block.withUnsafeBufferPointer { buffer in eachField(of: buffer, folded: { more in
            guard !fields.isEmpty else { return false }
            if !more.isEmpty { fields[fields.count - 1].value += " " + String(decoding: more, as: UTF8.self) }
            return true
        }, field: { name, value in
            fields.append(Field(name: commonText(name) ?? String(decoding: name, as: UTF8.self),
                                value: commonText(value) ?? String(decoding: value, as: UTF8.self)))
        }) }
        self.init(fields)
    }

    /// `body` of the first value of `name` (ASCII) in a raw header block, as
    /// `HTTPHeaders(parsing: block)[name]` reads it, as its bytes in place: no
    /// field nor `String` made (a 304's `ETag` on the transfer loop). A block
    /// with a folded line, or whose value is not ASCII, is parsed as before.
    public static func withFirstValue<R>(of name: StaticString, in block: [UInt8],
                                         _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        var found: UnsafeBufferPointer<UInt8>?, plain = true
        return block.withUnsafeBufferPointer { buffer in
            eachField(of: buffer, folded: { _ in plain = false; return false }, field: { field, value in
                guard found == nil, field.count == name.utf8CodeUnitCount,
                      field.indices.allSatisfy({ sameLetter(field[$0], name.utf8Start[$0]) }) else { return }
                found = value
                if value.contains(where: { $0 >= 0x80 }) { plain = false }
            })
            guard plain else {
                var value = HTTPHeaders(parsing: block)["\(name)"]
                return value == nil ? body(nil) : value!.withUTF8 { body($0) }
            }
            return body(found)
        }
    }
}

/// Walks a header block's lines: `folded` gets a continuation line's bytes
/// (trimmed) and says whether it took it, else the line is read as a field;
/// `field` gets each "Name: value" line's name and trimmed value. Status
/// lines, lines without a colon and empty names are skipped. Inlined into
/// its two callers with their closures (called per line before: 206
/// instructions more a 304's parse, 87 more its `ETag` read).
@inline(__always)
private func eachField(of buffer: UnsafeBufferPointer<UInt8>, folded: (UnsafeBufferPointer<UInt8>) -> Bool,
                       field: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
    guard let base = buffer.baseAddress else { return }
    var lineStart = 0
    while lineStart < buffer.count {
        let lineEnd = memchr(base + lineStart, 0x0A, buffer.count - lineStart)
            .map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base } ?? buffer.count
        let line = UnsafeBufferPointer(rebasing: buffer[lineStart..<lineEnd])
        lineStart = lineEnd + 1
        guard let first = line.first else { continue }
        if first == 0x20 || first == 0x09, folded(trimmed(line, from: 0)) { continue }
        guard let found = memchr(line.baseAddress!, 0x3A, line.count) else { continue }
        let colon = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) - line.baseAddress!
        guard colon > 0, !isStatusLine(line) else { continue }
        field(UnsafeBufferPointer(rebasing: line[..<colon]), trimmed(line, from: colon + 1))
    }
}

/// Whether two bytes are equal, ASCII letters case-insensitively (as `asciiCaseInsensitiveEqual`).
private func sameLetter(_ x: UInt8, _ y: UInt8) -> Bool {
    x == y || (x | 0x20 == y | 0x20 && x | 0x20 >= 0x61 && x | 0x20 <= 0x7A)
}

/// The field names most responses carry, and a few of their usual values,
/// as constant strings when `bytes` are exactly those: no string is made
/// (a UTF-8 check and, past 15 bytes, an allocation, freed with the
/// response) for about half of a usual response's 16. The field keeps the
/// bytes the server sent, whatever their case.
private func commonText(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    switch bytes.count {
    case 4 where equals(bytes, "Date"): return "Date"
    case 4 where equals(bytes, "ETag"): return "ETag"
    case 5 where equals(bytes, "bytes"): return "bytes"
    case 6 where equals(bytes, "Server"): return "Server"
    case 9 where equals(bytes, "image/png"): return "image/png"
    case 10 where equals(bytes, "Connection"): return "Connection"
    case 10 where equals(bytes, "keep-alive"): return "keep-alive"
    case 10 where equals(bytes, "image/jpeg"): return "image/jpeg"
    case 10 where equals(bytes, "image/webp"): return "image/webp"
    case 12 where equals(bytes, "Content-Type"): return "Content-Type"
    case 13 where equals(bytes, "Last-Modified"): return "Last-Modified"
    case 13 where equals(bytes, "Accept-Ranges"): return "Accept-Ranges"
    case 13 where equals(bytes, "Cache-Control"): return "Cache-Control"
    case 14 where equals(bytes, "Content-Length"): return "Content-Length"
    default: return nil
    }
}

/// Whether `bytes` are exactly `text`'s.
private func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
    bytes.count == text.utf8CodeUnitCount && memcmp(bytes.baseAddress!, text.utf8Start, bytes.count) == 0
}

/// Whether `line` starts with "HTTP/" (a status line, whose reason phrase may hold a colon).
private func isStatusLine(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
    line.count >= 5 && line[0] == 0x48 && line[1] == 0x54 && line[2] == 0x54 && line[3] == 0x50 && line[4] == 0x2F
}

/// `line[start...]` without leading and trailing spaces, tabs, CR and LF.
private func trimmed(_ line: UnsafeBufferPointer<UInt8>, from start: Int) -> UnsafeBufferPointer<UInt8> {
    func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
    var lower = start
    var upper = line.count
    while lower < upper && isSpace(line[lower]) { lower += 1 }
    while upper > lower && isSpace(line[upper - 1]) { upper -= 1 }
    return UnsafeBufferPointer(rebasing: line[lower..<upper])
}
