import enum Fetch.Defaults
import enum Support.HumanUnits

/// One line of progress for stderr: done/total, failures, bytes received
/// (of how many, when every transfer in flight declared its length), rate
/// and ETA. Pure rendering, no I/O: the caller (`Reporter`)
/// decides when to draw and erase it, and `record`s each state it draws.
///
/// The rate and the ETA come from the last `Defaults.progressRateWindow`
/// seconds, not from the whole run: an average since the start said
/// `0 B/s` in a run of cache hits, kept a stalled transfer's rate up, and
/// made the ETA grow at a run's end while its last URL took its time
/// (elapsed time grew and the count did not). So the rate is shown only
/// once bytes came from the network (`stalled` when bodies are in flight
/// and none came in the window), and an ETA by URLs only while some URLs
/// wait to start (`transfersRunning`): when every URL left is running, how
/// long the slowest takes is not known from a count, and by bytes only when
/// every one of them declared its length (`byteTotal`).
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
    /// Transfers holding a slot now, when known: no ETA by URLs while every URL left is one of them.
    public var transfersRunning: Int?

    /// The states drawn in the last `window` seconds (`record`), oldest first.
    private var samples: [Sample] = []
    private struct Sample: Sendable {
        let elapsed: Double
        let bytes: Int64
        let done: Int
    }
    /// Seconds of history the rate and the ETA are taken over.
    public let window: Double

    public init(window: Double = Defaults.progressRateWindow) { self.window = window }

    /// Keeps the state as it is now (`elapsed`, `bytes`, `done`) for the
    /// rate and the ETA; called once per redraw, before `render`. Keeps one
    /// sample from the start of the window or before it, so the window is whole.
    public mutating func record() {
        samples.append(Sample(elapsed: elapsed, bytes: bytes, done: done))
        var drop = 0
        while drop + 1 < samples.count, elapsed - samples[drop + 1].elapsed >= window { drop += 1 }
        if drop > 0 { samples.removeFirst(drop) }
    }

    /// Bytes and URLs a second over the recorded window; nil until it spans
    /// `Defaults.progressRateAfter` (half a second) of the run.
    var recent: (bytes: Double, urls: Double)? {
        guard let oldest = samples.first, elapsed - oldest.elapsed >= Defaults.progressRateAfter else { return nil }
        let span = elapsed - oldest.elapsed
        return (Double(bytes - oldest.bytes) / span, Double(done - oldest.done) / span)
    }


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
        let recent = recent
        if let rate = recent?.bytes, bytes > 0 {
            if rate >= 1 {
                parts.append(HumanUnits.bytes(Int64(rate)) + "/s")
            } else if bodiesInFlight > 0 {
                parts.append("stalled")
            }
        }
        if let byteTotal, let rate = recent?.bytes, rate >= 1 {
            parts.append("ETA " + Self.clock(Double(byteTotal - bytes) / rate))
        } else if byteTotal == nil, let total, done < total, let rate = recent?.urls, rate > 0,
                  total - done > transfersRunning ?? 0 {
            parts.append("ETA " + Self.clock(Double(total - done) / rate))
        }
        let text = parts.joined(separator: "  ")
        // The bar takes its cells plus four columns: `[`, `]` and two spaces.
        let room = width - 1 - text.count - 4
        var line = text
        if let fraction, room >= Defaults.progressMinimumCells {
            // As many cells as the width leaves beside `progressTextColumns` of text, so the bar keeps its
            // length while the text's changes by a character or two; fewer only for a longer text.
            let cells = min(Defaults.progressMaximumCells, room, max(Defaults.progressMinimumCells, width - 1 - 4 - Defaults.progressTextColumns))
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
