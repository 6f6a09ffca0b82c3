import enum Support.HumanUnits

/// Builds one JSON object on one line, fields in the order they are added
/// (SPEC §3's shapes), with strings escaped per RFC 8259.
///
/// Public so a Swift program writes the same lines as the tool. Built as UTF-8 bytes: with `--json` every phase change of every URL is
/// one of these, so string concatenation was a large share of a cached run.
public struct JSONLine: Sendable {
    private var bytes: [UInt8] = [0x7B]   // "{"
    private var first = true

    public init() { bytes.reserveCapacity(256) }

    private mutating func key(_ name: StaticString) {
        if !first { bytes.append(0x2C) }
        first = false
        bytes.append(0x22)
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(0x22)
        bytes.append(0x3A)
    }

    public mutating func add(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        Self.appendQuoted(value, to: &bytes)
    }

    public mutating func add(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        key(name)
        HumanUnits.appendDecimal(Int64(value), to: &bytes)
    }

    public mutating func add(_ name: StaticString, _ value: Int64?) {
        guard let value else { return }
        key(name)
        HumanUnits.appendDecimal(value, to: &bytes)
    }

    public mutating func add(_ name: StaticString, _ value: Bool) {
        key(name)
        bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8))
    }

    /// Milliseconds with one decimal.
    public mutating func add(_ name: StaticString, milliseconds seconds: Double) {
        key(name)
        let tenths = Int64((seconds * 10_000).rounded())
        HumanUnits.appendDecimal(tenths / 10, to: &bytes)
        bytes.append(0x2E)
        bytes.append(UInt8(truncatingIfNeeded: 0x30 + abs(tenths % 10)))
    }

    public mutating func add(_ name: StaticString, object: JSONLine) {
        key(name)
        bytes.append(contentsOf: object.bytes)
        bytes.append(0x7D)
    }

    /// The object's bytes, closed, after `out`'s.
    public func render(to out: inout [UInt8]) {
        out.append(contentsOf: bytes)
        out.append(0x7D)   // "}"
    }

    public var rendered: String {
        var out = bytes
        out.append(0x7D)   // "}"
        return String(decoding: out, as: UTF8.self)
    }

    public static func quote(_ value: String) -> String {
        var out: [UInt8] = []
        appendQuoted(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `"value"`, escaping quotes, backslashes and control characters;
    /// everything else (UTF-8 included) is copied as it is.
    public static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        out.append(0x22)
        // The usual value (a URL, a path) needs no escape: copied in one piece.
        let copied = value.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            for byte in bytes where byte < 0x20 || byte == 0x22 || byte == 0x5C || byte == 0x7F { return false }
            out.append(contentsOf: bytes)
            return true
        } ?? false
        if copied {
            out.append(0x22)
            return
        }
        for byte in value.utf8 {
            switch byte {
            case 0x22: out.append(0x5C); out.append(0x22)
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x0A: out.append(0x5C); out.append(0x6E)
            case 0x0D: out.append(0x5C); out.append(0x72)
            case 0x09: out.append(0x5C); out.append(0x74)
            case 0x00..<0x20, 0x7F:
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default:
                out.append(byte)
            }
        }
        out.append(0x22)
    }
}
