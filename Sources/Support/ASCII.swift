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
