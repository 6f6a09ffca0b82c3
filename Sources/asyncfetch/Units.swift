import ArgumentParser

/// A duration option: seconds, or a number with `s`, `m`, `h` or `d` (SPEC §3).
struct DurationValue: ExpressibleByArgument, Sendable, CustomStringConvertible {
    let seconds: Double

    init(seconds: Double) { self.seconds = seconds }

    init?(argument: String) {
        let text = argument.lowercased()
        let units: [(String, Double)] = [("s", 1), ("m", 60), ("h", 3600), ("d", 86400)]
        var multiplier = 1.0
        var number = Substring(text)
        if let (suffix, factor) = units.first(where: { text.hasSuffix($0.0) }) {
            multiplier = factor
            number = number.dropLast(suffix.count)
        }
        guard let value = Double(number), value.isFinite, value >= 0 else { return nil }
        seconds = value * multiplier
    }

    var description: String {
        for (unit, factor) in [("d", 86400.0), ("h", 3600.0), ("m", 60.0)] where seconds >= factor && seconds.truncatingRemainder(dividingBy: factor) == 0 {
            return "\(Int(seconds / factor))\(unit)"
        }
        return seconds == seconds.rounded() ? "\(Int(seconds))s" : "\(seconds)s"
    }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// A size option: bytes, or a number with `K`, `M` or `G` (powers of 1024).
struct SizeValue: ExpressibleByArgument, Sendable, CustomStringConvertible {
    let bytes: Int64

    init(bytes: Int64) { self.bytes = bytes }

    init?(argument: String) {
        var text = Substring(argument.uppercased())
        if text.hasSuffix("IB") { text = text.dropLast(2) } else if text.hasSuffix("B") && text.count > 1 && !text.dropLast().last!.isNumber { text = text.dropLast() }
        var multiplier: Double = 1
        if let last = text.last, let factor = ["K": 1024.0, "M": 1048576.0, "G": 1073741824.0][String(last)] {
            multiplier = factor
            text = text.dropLast()
        }
        guard let value = Double(text), value.isFinite, value >= 0, value * multiplier < 9.2e18 else { return nil }
        bytes = Int64(value * multiplier)
    }

    var description: String {
        for (unit, factor) in [("G", Int64(1) << 30), ("M", Int64(1) << 20), ("K", Int64(1) << 10)] where bytes >= factor && bytes % factor == 0 {
            return "\(bytes / factor)\(unit)"
        }
        return "\(bytes)"
    }
}

/// The accepted forms of the value types, for the message about a value of
/// the wrong form (swift-argument-parser's "The value 'X' is invalid for
/// '--timeout <duration>'" alone does not say what would do).
enum ValueForms {
    static let duration = "give seconds (30, 0.5) or a number with s, m, h or d (90s, 5m, 1.5h, 7d)"
    static let size = "give bytes (65536) or a number with K, M or G, powers of 1024 (512K, 64M, 1.5G)"

    /// The forms for the value named in swift-argument-parser's message, if it names one of ours.
    static func hint(for message: String) -> String? {
        guard message.contains("is invalid for") else { return nil }
        if message.contains("<duration>'") {
            return duration + (message.lowercased().contains("ms'") ? "; milliseconds are written as seconds (500ms is 0.5)" : "")
        }
        if message.contains("<size>'") { return size }
        return nil
    }
}
