/// Builds one JSON object on one line, fields in the order they are added
/// (SPEC §3's shapes), with strings escaped per RFC 8259.
struct JSONLine {
    private var text = "{"
    private var first = true

    private mutating func key(_ name: String) {
        if !first { text += "," }
        first = false
        text += "\"" + name + "\":"
    }

    mutating func add(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        text += JSONLine.quote(value)
    }

    mutating func add(_ name: String, _ value: Int?) {
        guard let value else { return }
        key(name)
        text += String(value)
    }

    mutating func add(_ name: String, _ value: Int64?) {
        guard let value else { return }
        key(name)
        text += String(value)
    }

    mutating func add(_ name: String, _ value: Bool) {
        key(name)
        text += value ? "true" : "false"
    }

    /// Milliseconds with one decimal.
    mutating func add(_ name: String, milliseconds seconds: Double) {
        key(name)
        let tenths = Int((seconds * 10_000).rounded())
        text += "\(tenths / 10).\(tenths % 10)"
    }

    mutating func add(_ name: String, object: JSONLine) {
        key(name)
        text += object.rendered
    }

    var rendered: String { text + "}" }

    static func quote(_ value: String) -> String {
        var copy = value
        let plain = copy.withUTF8 { bytes in
            !bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }
        }
        if plain { return "\"" + value + "\"" }   // the common case: nothing to escape
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
