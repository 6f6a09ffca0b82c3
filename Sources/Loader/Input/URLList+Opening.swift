import Fetch

/// Opening the `--input` lists a run names, and reading a short one whole.
extension URLList {
    /// Opens every list named (`-` is stdin), in order: the ones that open,
    /// and an `io` `LoadError` for each that does not, all of them, not the
    /// first: with `-i a.txt -i b.txt`, both unreadable, the user learns of
    /// both at once, not of one per run.
    public static func open(inputs paths: [String]) -> (opened: [InputLines], unreadable: [LoadError]) {
        var opened: [InputLines] = []
        var unreadable: [LoadError] = []
        for path in paths {
            do {
                opened.append(try InputLines(path: path))
            } catch let error as LoadError {
                unreadable.append(error)
            } catch {
                unreadable.append(.unreadableList(path, "\(error)"))
            }
        }
        return (opened, unreadable)
    }

    /// Every URL of `arguments`, then of each list in `paths`, read at once
    /// (the `cache` commands): arguments trimmed as a run trims them, a
    /// `URL<TAB>name` line's URL alone, a line too long to keep a sentence
    /// that is no URL. The first list that cannot be read is the error.
    public static func readAll(arguments: [String], inputs paths: [String]) throws(LoadError) -> [String] {
        var all = arguments.map(trimmed)
        for path in paths {
            all += try InputLines.readAll(path: path) { "(line \($0): longer than \(Defaults.inputMaxLineBytes) bytes)" }
                .map(GivenNames.url(ofLine:))
        }
        return all
    }
}
