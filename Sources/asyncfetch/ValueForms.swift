import struct Loader.Shard
import enum Support.HumanUnits

/// The accepted forms of the value types (worded beside their parsers in
/// `HumanUnits`), for the message about a value of the wrong form
/// (swift-argument-parser's "The value 'X' is invalid for '--timeout
/// <duration>'" alone does not say what would do).
enum ValueForms {
    /// The forms for the value named in swift-argument-parser's message, if it names one of ours.
    static func hint(for message: String) -> String? {
        guard message.contains("is invalid for") else { return nil }
        if message.contains("<duration>'") {
            return HumanUnits.secondsForms + (message.lowercased().contains("ms'") ? "; milliseconds are written as seconds (500ms is 0.5)" : "")
        }
        if message.contains("<size>'") { return HumanUnits.byteCountForms }
        if message.contains("<K/N>'") { return Shard.argumentForms }
        return nil
    }
}
