/// Text from bytes that should be UTF-8 (a line of an `--input` list, a
/// command-line argument): the string itself when they are, else the same
/// bytes with every one that is not part of a well-formed UTF-8 sequence
/// written as `%XX` (uppercase hex), as browsers write a URL's bytes. So a
/// byte never becomes U+FFFD: the text names exactly the bytes given, the
/// cache key and the printed URL are those of the `%XX` form, and a server
/// receives the byte it would have received from curl (`%FF` and a raw
/// 0xFF mean the same byte to it). Valid input costs one validation; ASCII
/// (a URL list's usual line) one pass over its bytes before the string's
/// copy (the generic `String(validating:as:)` cost ~1.2 k instructions for a
/// 30-byte line: bench/history/cold.md, "Session 22: cold").
public func textPercentEncodingInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
    var anyHigh: UInt8 = 0
    for byte in bytes { anyHigh |= byte }
    if anyHigh < 0x80 { return String(decoding: bytes, as: UTF8.self) }
    if let text = String(validating: bytes, as: UTF8.self) { return text }
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count + 8)
    var index = 0
    while index < bytes.count {
        let length = wellFormedUTF8Length(bytes, at: index)
        if length > 0 {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index..<(index + length)]))
            index += length
        } else {
            let byte = bytes[index]
            out.append(UInt8(ascii: "%"))
            out.append(upperHexDigit(byte >> 4))
            out.append(upperHexDigit(byte & 0x0F))
            index += 1
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// The length of the well-formed UTF-8 sequence starting at `index`
/// (Unicode Table 3-7), or 0 when the byte there does not start one.
private func wellFormedUTF8Length(_ b: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
    let first = b[index]
    if first < 0x80 { return 1 }
    func continuation(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
        index + offset < b.count && range.contains(b[index + offset])
    }
    switch first {
    case 0xC2...0xDF: return continuation(1) ? 2 : 0
    case 0xE0: return continuation(1, 0xA0...0xBF) && continuation(2) ? 3 : 0
    case 0xE1...0xEC, 0xEE...0xEF: return continuation(1) && continuation(2) ? 3 : 0
    case 0xED: return continuation(1, 0x80...0x9F) && continuation(2) ? 3 : 0
    case 0xF0: return continuation(1, 0x90...0xBF) && continuation(2) && continuation(3) ? 4 : 0
    case 0xF1...0xF3: return continuation(1) && continuation(2) && continuation(3) ? 4 : 0
    case 0xF4: return continuation(1, 0x80...0x8F) && continuation(2) && continuation(3) ? 4 : 0
    default: return 0
    }
}

private func upperHexDigit(_ value: UInt8) -> UInt8 {
    value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10
}
