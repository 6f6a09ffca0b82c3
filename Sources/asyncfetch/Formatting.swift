/// `153 B`, `4.2 KiB`, `1.0 MiB`: sizes for people (powers of 1024).
func formatBytes(_ bytes: Int64) -> String {
    var text: [UInt8] = []
    appendBytesText(bytes, to: &text)
    return String(decoding: text, as: UTF8.self)
}

/// `formatBytes` appended as UTF-8 (a result line is built as bytes).
func appendBytesText(_ bytes: Int64, to out: inout [UInt8]) {
    if bytes < 1024 {
        JSONLine.appendDecimal(bytes, to: &out)
        out.append(contentsOf: " B".utf8)
        return
    }
    let units: [StaticString] = [" KiB", " MiB", " GiB", " TiB"]
    var value = Double(bytes) / 1024
    var unit = 0
    while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
    let tenths = Int64((value * 10).rounded())
    JSONLine.appendDecimal(tenths / 10, to: &out)
    out.append(0x2E)
    JSONLine.appendDecimal(tenths % 10, to: &out)
    units[unit].withUTF8Buffer { out.append(contentsOf: $0) }
}

/// `12.4 ms` below a second, `1.25 s` above.
func formatDuration(_ seconds: Double) -> String {
    if seconds < 1 {
        let tenths = Int((seconds * 10_000).rounded())
        return "\(tenths / 10).\(tenths % 10) ms"
    }
    let hundredths = Int((seconds * 100).rounded())
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) s"
}

/// `SIGINT` / `SIGTERM` for messages.
func signalName(_ signo: Int32) -> String {
    switch signo {
    case 2: return "SIGINT"
    case 15: return "SIGTERM"
    default: return "signal \(signo)"
    }
}

extension String {
    /// The string followed by spaces up to `length` characters (never cut):
    /// aligned columns in human output.
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}
