extension HTTPHeaders {
    /// Parses a response's header block as libcurl hands it over: a status
    /// line, then "Name: value" lines ending in CRLF (or LF), then a blank
    /// line. Lines without a colon (status lines, the blank line) are skipped;
    /// folded continuation lines (obsolete, RFC 9112 §5.2) are joined to the
    /// field before them.
    public init(parsing block: [UInt8]) {
        var fields: [Field] = []
        block.withUnsafeBufferPointer { buffer in
            // One allocation: at most one field per line (a 304's ~8 grew the array 4 times).
            var lines = 0
            for byte in buffer where byte == 0x0A { lines += 1 }
            fields.reserveCapacity(lines)
            var lineStart = 0
            while lineStart < buffer.count {
                var lineEnd = lineStart
                while lineEnd < buffer.count && buffer[lineEnd] != 0x0A { lineEnd += 1 }
                let line = UnsafeBufferPointer(rebasing: buffer[lineStart..<lineEnd])
                lineStart = lineEnd + 1
                if let first = line.first, first == 0x20 || first == 0x09, !fields.isEmpty {
                    let more = trimmed(line, from: 0)
                    if !more.isEmpty { fields[fields.count - 1].value += " " + String(decoding: more, as: UTF8.self) }
                    continue
                }
                guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0,
                      !line.starts(with: "HTTP/".utf8) else { continue }
                let name = String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self)
                let value = String(decoding: trimmed(line, from: colon + 1), as: UTF8.self)
                fields.append((name: name, value: value))
            }
        }
        self.init(fields)
    }
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
