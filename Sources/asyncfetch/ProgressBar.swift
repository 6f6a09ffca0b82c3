/// One line of progress for stderr: done/total, failures, bytes, rate and
/// ETA. Pure rendering; `Reporter` decides when to draw and erase it.
struct ProgressBar {
    /// URLs that reached their terminal phase.
    var done = 0
    var failed = 0
    /// Bytes of the bodies that arrived so far.
    var bytes: Int64 = 0
    /// Distinct URLs taken up so far.
    var known = 0
    /// Distinct URLs in all, once the whole list is known.
    var total: Int?
    var elapsed: Double = 0

    /// The line, at most `width - 1` columns (a full-width line would wrap
    /// and could no longer be erased with a carriage return).
    func render(width: Int) -> String {
        var parts: [String] = []
        if let total {
            parts.append("\(done)/\(total) URLs")
        } else {
            parts.append("\(done)/\(max(known, done))+ URLs")
        }
        if failed > 0 { parts.append("\(failed) failed") }
        parts.append(formatBytes(bytes))
        if elapsed >= 0.5 { parts.append(formatBytes(Int64(Double(bytes) / elapsed)) + "/s") }
        if let total, done > 0, done < total, elapsed >= 0.5 {
            parts.append("ETA " + Self.clock(elapsed / Double(done) * Double(total - done)))
        }
        let text = parts.joined(separator: "  ")
        let room = width - 1 - text.count - 3
        var line = text
        if let total, total > 0, room >= 10 {
            let cells = min(30, room)
            let filled = min(cells, done * cells / total)
            line = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: cells - filled) + "]  " + text
        }
        return String(line.prefix(max(0, width - 1)))
    }

    /// `8s`, `1m05s`, `2h03m`.
    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m" + (s % 60 < 10 ? "0" : "") + "\(s % 60)s" }
        return "\(s / 3600)h" + (s % 3600 / 60 < 10 ? "0" : "") + "\(s % 3600 / 60)m"
    }
}
