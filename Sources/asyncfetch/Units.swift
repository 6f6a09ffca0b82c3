import ArgumentParser
import enum Support.HumanUnits

/// A duration option: seconds, or a number with `s`, `m`, `h` or `d` (SPEC §3).
struct DurationValue: ExpressibleByArgument, Sendable, CustomStringConvertible {
    let seconds: Double

    init(seconds: Double) { self.seconds = seconds }

    init?(argument: String) {
        guard let seconds = HumanUnits.seconds(argument) else { return nil }
        self.seconds = seconds
    }

    var description: String { HumanUnits.durationArgument(seconds) }

    static var defaultCompletionKind: CompletionKind { .default }
}

/// A size option: bytes, or a number with `K`, `M` or `G` (powers of 1024).
struct SizeValue: ExpressibleByArgument, Sendable, CustomStringConvertible {
    let bytes: Int64

    init(bytes: Int64) { self.bytes = bytes }

    init?(argument: String) {
        guard let bytes = HumanUnits.byteCount(argument) else { return nil }
        self.bytes = bytes
    }

    var description: String { HumanUnits.byteCountArgument(bytes) }
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
