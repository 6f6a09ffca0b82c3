/// `153 B`, `4.2 KiB`, `1.0 MiB`: sizes for people (powers of 1024).
func formatBytes(_ bytes: Int64) -> String {
    if bytes < 1024 { return "\(bytes) B" }
    let units = ["KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes) / 1024
    var unit = 0
    while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) \(units[unit])"
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
