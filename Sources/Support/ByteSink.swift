/// Where text built as bytes goes: an array, or a line gathered on the
/// stack (the Loader's result lines). `HumanUnits` writes sizes and numbers
/// to any of them; its functions are `@inlinable`, so each caller gets them
/// specialised for its own sink, with no generic call.
public protocol ByteSink {
    mutating func append(_ byte: UInt8)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>)
}

/// An array's own `append`s (its generic `append(contentsOf:)` serves).
extension Array: ByteSink where Element == UInt8 {}

extension ByteSink {
    /// A literal's UTF-8 (the tool's own words: no string to borrow).
    @inlinable
    public mutating func append(literal text: StaticString) {
        if text.hasPointerRepresentation {
            append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        } else {
            text.withUTF8Buffer { append(contentsOf: $0) }
        }
    }
}
