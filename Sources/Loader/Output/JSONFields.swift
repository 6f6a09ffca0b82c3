import Support

/// The fields of one JSON object written to any byte sink: `JSONLine`'s
/// own array, or a result line gathered on the stack (`LineBytes`), where a
/// cache hit's `--json` line is written with no array of its own and no
/// array `append` per piece. Fields in the order they are added, strings
/// escaped per RFC 8259; `close` ends the object.
struct JSONFields<Sink: ByteSink> {
    var sink: Sink
    private var first = true

    /// Opens the object (`{`) after what `sink` holds.
    init(opening sink: Sink) {
        self.sink = sink
        self.sink.append(0x7B)   // {
    }

    mutating func close() {
        sink.append(0x7D)   // }
    }

    private mutating func key(_ name: StaticString) {
        if !first { sink.append(0x2C) }
        first = false
        sink.append(0x22)
        sink.append(literal: name)
        sink.append(0x22)
        sink.append(0x3A)
    }

    mutating func add(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        Self.appendQuoted(value, to: &sink)
    }

    mutating func add(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        key(name)
        HumanUnits.appendDecimal(Int64(value), to: &sink)
    }

    mutating func add(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        HumanUnits.appendDecimal(value, to: &sink)
    }

    mutating func add(_ name: StaticString, _ value: Bool) {
        key(name)
        sink.append(literal: value ? "true" : "false")
    }

    /// An array of strings, `["a","b"]`.
    mutating func add(_ name: StaticString, _ values: [String]) {
        key(name)
        sink.append(0x5B)   // [
        for (index, value) in values.enumerated() {
            if index > 0 { sink.append(0x2C) }
            Self.appendQuoted(value, to: &sink)
        }
        sink.append(0x5D)   // ]
    }

    /// Milliseconds with one decimal.
    mutating func add(_ name: StaticString, milliseconds seconds: Double) {
        key(name)
        let tenths = Int64((seconds * 10_000).rounded())
        HumanUnits.appendDecimal(tenths / 10, to: &sink)
        sink.append(0x2E)
        sink.append(UInt8(truncatingIfNeeded: 0x30 + abs(tenths % 10)))
    }

    /// A nested object, as `object` has it.
    mutating func add(_ name: StaticString, object: JSONLine) {
        key(name)
        object.render(into: &sink)
    }

    /// A stored body's path (`LoadResult.path`), quoted; a cache entry's
    /// `DIR/<key>` written in pieces, not built first.
    mutating func add(_ name: StaticString, _ value: LoadResult.StoredBody?) {
        guard let value else { return }
        key(name)
        sink.append(0x22)
        Self.appendEscaped(value.directory, to: &sink)
        if let key = value.key {
            if value.hasSeparator { sink.append(0x2F) }   // /
            key.withHex { digits, _ in sink.append(contentsOf: digits) }   // hex digits, nothing to escape
        }
        sink.append(0x22)
    }

    /// `"value"`, escaping quotes, backslashes and control characters;
    /// everything else (UTF-8 included) is copied as it is.
    static func appendQuoted(_ value: String, to out: inout Sink) {
        out.append(0x22)
        appendEscaped(value, to: &out)
        out.append(0x22)
    }

    /// `appendQuoted` without the quotes.
    private static func appendEscaped(_ value: String, to out: inout Sink) {
        // The usual value (a URL, a path) needs no escape: copied in one piece.
        let copied = value.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            if ByteScan.contains(below: 0x20, or: 0x22, 0x5C, 0x7F, in: bytes) { return false }
            out.append(contentsOf: bytes)
            return true
        } ?? false
        if copied { return }
        for byte in value.utf8 {
            switch byte {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(0x6E)
            case 0x0D: out.append(0x5C); out.append(0x72)
            case 0x09: out.append(0x5C); out.append(0x74)
            case 0x00..<0x20, 0x7F:
                out.append(0x5C); out.append(0x75); out.append(0x30); out.append(0x30)
                out.append(asciiHexDigit(byte >> 4))
                out.append(asciiHexDigit(byte & 0x0F))
            default:
                out.append(byte)
            }
        }
    }
}

extension JSONFields: Sendable where Sink: Sendable {}
