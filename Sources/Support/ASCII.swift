/// The string without leading and trailing spaces and tabs.
@inlinable
public func trimWhitespace<S: StringProtocol>(_ text: S) -> String {
    // Spaces and tabs are ASCII, so trimming works on the UTF-8 bytes; the
    // common case (nothing to trim) copies the text once.
    let substring = Substring(text)
    let utf8 = substring.utf8
    var start = utf8.startIndex
    var end = utf8.endIndex
    while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start = utf8.index(after: start) }
    while end > start {
        let before = utf8.index(before: end)
        guard utf8[before] == 0x20 || utf8[before] == 0x09 else { break }
        end = before
    }
    return String(substring[start..<end])
}

/// Trimmed of spaces and tabs, then lowercased.
@inlinable
public func trimWhitespaceLower<S: StringProtocol>(_ text: S) -> String {
    trimWhitespace(text).lowercased()
}

/// Header names are ASCII: compare them without building lowercased copies
/// (nor copying the strings: this runs for every header of every hit).
/// The lengths are compared inline, in the caller: most names looked up
/// differ in length from the one asked for, and cost no call.
@inlinable
public func asciiCaseInsensitiveEqual(_ a: String, _ b: String) -> Bool {
    a.utf8.count == b.utf8.count && asciiCaseInsensitiveEqualSameLength(a, b)
}

/// `asciiCaseInsensitiveEqual` for two strings of the same UTF-8 length.
@usableFromInline
func asciiCaseInsensitiveEqualSameLength(_ a: String, _ b: String) -> Bool {
    let x = a.utf8, y = b.utf8
    // Native strings (all of ours) are contiguous: compare the bytes in place.
    let fast = x.withContiguousStorageIfAvailable { xs in
        y.withContiguousStorageIfAvailable { ys in asciiCaseInsensitiveEqual(xs, ys) }
    }
    if let fast, let equal = fast { return equal }
    let xs = Array(x), ys = Array(y)
    return xs.withUnsafeBufferPointer { xp in ys.withUnsafeBufferPointer { yp in asciiCaseInsensitiveEqual(xp, yp) } }
}

private func asciiCaseInsensitiveEqual(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool {
    for i in 0..<x.count where x[i] != y[i] {
        let l = x[i] | 0x20
        guard l == y[i] | 0x20, l >= 0x61, l <= 0x7A else { return false }
    }
    return true
}

/// The ASCII hex digit of `nibble` (0…15): `0`–`9`, then `a`–`f`, or
/// `A`–`F` when `uppercase` (cache keys and JSON escapes are lowercase;
/// the human lines' `\x1B` escapes uppercase).
@inlinable @inline(__always)
public func asciiHexDigit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
    nibble < 10 ? 0x30 + nibble : (uppercase ? 0x37 : 0x57) + nibble
}
