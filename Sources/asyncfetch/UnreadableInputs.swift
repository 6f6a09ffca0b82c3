import Loader

/// Every `--input` list that cannot be read, each said on its own line
/// (`Main.exitStatus`; exit 2, SPEC §3): with `-i a.txt -i b.txt`, both
/// unreadable, the user learns of both at once, not of one per run.
struct UnreadableInputs: Error {
    let errors: [LoadError]

    /// Opens every list named (`-` is stdin), in order; throws every failure, not the first.
    static func open(_ paths: [String]) throws(UnreadableInputs) -> [InputLines] {
        var opened: [InputLines] = []
        var failed: [LoadError] = []
        for path in paths {
            do {
                opened.append(try InputLines(path: path))
            } catch let error as LoadError {
                failed.append(error)
            } catch {
                failed.append(.unreadableList(path, "\(error)"))
            }
        }
        guard failed.isEmpty else { throw UnreadableInputs(errors: failed) }
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
