import ArgumentParser
import enum Support.HumanUnits

/// A size option: bytes, or a number with `K`, `M` or `G` (powers of 1024).
/// The parsing is Support's (`HumanUnits.byteCount`): this type only adapts
/// it to swift-argument-parser.
struct SizeValue: ExpressibleByArgument, Sendable, CustomStringConvertible {
    let bytes: Int64

    init(bytes: Int64) { self.bytes = bytes }

    init?(argument: String) {
        guard let bytes = HumanUnits.byteCount(argument) else { return nil }
        self.bytes = bytes
    }

    var description: String { HumanUnits.byteCountArgument(bytes) }
}
