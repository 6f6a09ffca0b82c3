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
        block.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var lineStart = 0
            while lineStart < buffer.count {
                let lineEnd = memchr(base + lineStart, 0x0A, buffer.count - lineStart)
                    .map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base } ?? buffer.count
                let line = UnsafeBufferPointer(rebasing: buffer[lineStart..<lineEnd])
                lineStart = lineEnd + 1
                guard let first = line.first else { continue }
                if first == 0x20 || first == 0x09, !fields.isEmpty {
                    let more = trimmed(line, from: 0)
                    if !more.isEmpty { fields[fields.count - 1].value += " " + String(decoding: more, as: UTF8.self) }
                    continue
                }
                guard let found = memchr(line.baseAddress!, 0x3A, line.count) else { continue }
                let colon = UnsafePointer(found.assumingMemoryBound(to: UInt8.self)) - line.baseAddress!
                guard colon > 0, !isStatusLine(line) else { continue }
                let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
                let value = String(decoding: trimmed(line, from: colon + 1), as: UTF8.self)
                fields.append((name: name, value: value))
            }
        }
        self.init(fields)
    }
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
