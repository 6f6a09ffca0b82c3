import enum Fetch.Defaults
import enum Support.HumanUnits

/// One line of progress for stderr: done/total, failures, bytes received
/// (of how many, when every transfer in flight declared its length), rate
/// and ETA. Pure rendering, no I/O: the caller (`Reporter`)
/// decides when to draw and erase it.
public struct ProgressBar: Sendable {
    /// URLs that reached their terminal phase.
    public var done = 0
    public var failed = 0
    /// Body bytes received from the network so far, counted as they arrive.
    public var bytes: Int64 = 0
    /// The bytes all started bodies come to, when each declared its length.
    public var expectedBytes: Int64?
    /// Bodies being received now.
    public var bodiesInFlight = 0
    /// Distinct URLs taken up so far.
    public var known = 0
    /// Distinct URLs in all, once the whole list is known.
    public var total: Int?
    public var elapsed: Double = 0
    /// Hosts with a transfer running, and hosts paused (they answered 429 or 503).
    public var hostsActive = 0
    public var hostsPaused = 0

    public init() {}

    /// The line, at most `width - 1` columns (a full-width line would wrap
    /// and could no longer be erased with a carriage return).
    public func render(width: Int) -> String {
        var parts: [String] = []
        if let total {
            parts.append("\(done)/\(total) URLs")
        } else {
            parts.append("\(done)/\(max(known, done))+ URLs")
        }
        if failed > 0 { parts.append("\(failed) failed") }
        if hostsActive > 1 || hostsPaused > 0 {
            parts.append("\(hostsActive) hosts" + (hostsPaused > 0 ? ", \(hostsPaused) paused" : ""))
        }
        let byteTotal = byteTotal
        parts.append(HumanUnits.bytes(bytes) + (byteTotal.map { " of " + HumanUnits.bytes($0) } ?? ""))
        let rate = elapsed >= Defaults.progressRateAfter ? Double(bytes) / elapsed : 0
        if elapsed >= Defaults.progressRateAfter { parts.append(HumanUnits.bytes(Int64(rate)) + "/s") }
        if let byteTotal, rate > 0 {
            parts.append("ETA " + Self.clock(Double(byteTotal - bytes) / rate))
        } else if let total, done > 0, done < total, elapsed >= Defaults.progressRateAfter {
            parts.append("ETA " + Self.clock(elapsed / Double(done) * Double(total - done)))
        }
        let text = parts.joined(separator: "  ")
        // The bar takes its cells plus four columns: `[`, `]` and two spaces.
        let room = width - 1 - text.count - 4
        var line = text
        if let fraction, room >= 10 {
            let cells = min(30, room)
            let filled = min(cells, Int(fraction * Double(cells)))
            line = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: cells - filled) + "]  " + text
        }
        return String(line.prefix(max(0, width - 1)))
    }

    /// The bytes to wait for, when they are what is left: every URL not done
    /// yet is receiving a body of declared length (one large URL, or the
    /// last few of a batch), so a byte count says more than a URL count.
    public var byteTotal: Int64? {
        guard let expectedBytes, expectedBytes > 0, bytes <= expectedBytes, let total, known >= total, done < total,
              total - done <= bodiesInFlight else { return nil }
        return expectedBytes
    }

    /// How full the bar is: by bytes when they are the measure, else by URLs.
    public var fraction: Double? {
        if let byteTotal { return Double(bytes) / Double(byteTotal) }
        guard let total, total > 0 else { return nil }
        return Double(done) / Double(total)
    }

    /// `8s`, `1m05s`, `2h03m`.
    public static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m" + (s % 60 < 10 ? "0" : "") + "\(s % 60)s" }
        return "\(s / 3600)h" + (s % 3600 / 60 < 10 ? "0" : "") + "\(s % 3600 / 60)m"
    }
}
