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
}
