import enum Support.ByteScan

extension FetchClient {
    /// True for the usual URL — `http://` or `https://` (any case), a host,
    /// no spaces or control characters — that `validate` accepts: one scan
    /// of the bytes with no allocation (it runs for every URL of a batch).
    /// False means only "take the full check", which finds the error.
    static func isPlainlyValid(_ url: String) -> Bool {
        // Borrowed bytes (no copy, no retain) for a native string, else a copy.
        if let answer = url.utf8.withContiguousStorageIfAvailable({ isPlainlyValid($0) }) { return answer }
        var url = url
        return url.withUTF8 { isPlainlyValid($0) }
    }

    private static func isPlainlyValid(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = b.count
        guard n > 7, b[0] | 0x20 == 0x68, b[1] | 0x20 == 0x74, b[2] | 0x20 == 0x74, b[3] | 0x20 == 0x70 else {
            return false   // "http"
        }
        var i = 4
        if b[i] | 0x20 == 0x73 { i += 1 }                                  // "s"
        guard i + 3 < n, b[i] == 0x3A, b[i + 1] == 0x2F, b[i + 2] == 0x2F else { return false }   // "://"
        i += 3
        let authorityStart = i
        var hostStart = i
        var portStart = -1                                                  // after the host's ':'
        while i < n {
            let byte = b[i]
            if byte <= 0x20 || byte == 0x7F { return false }
            if byte == 0x2F || byte == 0x3F || byte == 0x23 {              // '/', '?', '#'
                guard i > hostStart, b[hostStart] != 0x3A, isPlainPort(b, portStart, i) else { return false }
                // The rest (path, query, fragment) needs only no space or control byte: eight at a time.
                return !ByteScan.contains(below: 0x21, or: 0x7F, 0x7F, 0x7F, in: UnsafeBufferPointer(rebasing: b[(i + 1)...]))
            } else if byte == 0x40 {                                        // '@'
                guard hostStart == authorityStart else { return false }      // a second one: the full check
                hostStart = i + 1
                portStart = -1
            } else if byte == 0x3A {                                        // ':'
                guard portStart < 0 else { return false }                   // a second one (IPv6, or malformed)
                portStart = i + 1
            } else if byte == 0x5B {                                        // '[': IPv6
                return false
            }
            i += 1
        }
        return n > hostStart && b[hostStart] != 0x3A && isPlainPort(b, portStart, n)
    }

    /// No port (`start` < 0), or 1 to 5 digits from 1 to 65535 in `b[start..<end]`.
    private static func isPlainPort(_ b: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int) -> Bool {
        guard start >= 0 else { return true }
        guard end > start, end - start <= 5 else { return false }
        var value = 0
        for k in start..<end {
            let digit = Int(b[k]) - 0x30
            guard digit >= 0 && digit <= 9 else { return false }
            value = value * 10 + digit
        }
        return value >= 1 && value <= 65535
    }
}
