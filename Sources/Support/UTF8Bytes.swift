/// Calls `body` with `text`'s UTF-8 bytes: borrowed in place for a native
/// string (no copy, no retain: the hot paths read URLs, keys and header
/// values this way), else from a copy of the string made contiguous.
@inlinable @inline(__always)
public func withUTF8Bytes<Result>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
    if let result = try text.utf8.withContiguousStorageIfAvailable(body) { return result }
    var copy = text
    return try copy.withUTF8(body)
}
