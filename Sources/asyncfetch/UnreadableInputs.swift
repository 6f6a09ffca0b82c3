import Loader

/// Every `--input` list that cannot be read, each said on its own line
/// (`Main.exitStatus`; exit 2, SPEC §3).
struct UnreadableInputs: Error {
    let errors: [LoadError]

    /// Opens every list named (`URLList.open`); throws every failure, not the first.
    static func open(_ paths: [String]) throws(UnreadableInputs) -> [InputLines] {
        let (opened, unreadable) = URLList.open(inputs: paths)
        guard unreadable.isEmpty else { throw UnreadableInputs(errors: unreadable) }
        return opened
    }

    /// A list's error (`cannot read --input FILE: …`, `LoadError.unreadableList`) in the
    /// option's spelling on the command line: `-i FILE` when only `-i` was typed
    /// (`cache path -i urls.txt` was told of an `--input` it had not given).
    static func asTyped(_ message: String, arguments: [String]) -> String {
        let long = "cannot read --input "
        guard message.hasPrefix(long), !arguments.contains(where: { $0 == "--input" || $0.hasPrefix("--input=") }) else {
            return message
        }
        return "cannot read -i " + message.dropFirst(long.count)
    }
}
