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

    /// "Missing value for '-o <file>'" of `-o -x.png` or `--user-agent -bot`:
    /// the parser takes a value that starts with `-` for an option. How to
    /// give one (`--output=-x.png`), or nil when the option was not followed by such a value.
    static func dashedValue(for message: String, arguments: [String]) -> String? {
        let prefix = "Missing value for '"
        guard message.hasPrefix(prefix) else { return nil }
        let option = String(message.dropFirst(prefix.count).prefix { $0 != " " && $0 != "'" })
        guard let index = arguments.firstIndex(of: option), index + 1 < arguments.count else { return nil }
        let value = arguments[index + 1]
        guard value.hasPrefix("-"), value.count > 1 else { return nil }
        let long = option.hasPrefix("--") ? option : option.count == 2 ? ArgumentCheck.shortNames[option.last!] : nil
        guard let long, long.hasPrefix("--") else { return nil }
        return "a value that starts with '-' is written \(long)=\(value)"
    }
}
