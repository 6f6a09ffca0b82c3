import ArgumentParser
import enum Support.HumanUnits

/// A duration option: seconds, or a number with `s`, `m`, `h` or `d` (SPEC §3).
/// The parsing is Support's (`HumanUnits.seconds`): this type only adapts it
/// to swift-argument-parser.
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
