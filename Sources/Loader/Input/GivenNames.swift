import Fetch
import Support

/// Names that input lines give their URL's file (`URL<TAB>name`, like
/// curl's url/output pairs in a `-K` file), for an `OutputDirectory`. Keyed
/// by the URL as reported (password removed). A URL listed twice keeps the
/// first name: it is fetched, and placed, once.
public final class GivenNames: Sendable {
    private let names = Locked<[String: String]>([:])

    public init() {}

    /// The URL part of an input line, remembering the name after a tab.
    public func split(_ line: String) -> String {
        guard let tab = line.utf8.firstIndex(of: 0x09) else { return line }
        let url = String(line[..<tab])
        let name = String(line[line.utf8.index(after: tab)...])
        if !name.isEmpty {
            let key = redactURL(url)
            names.withLock { names in if names[key] == nil { names[key] = name } }
        }
        return url
    }

    /// The URL part of an input line whose name is not wanted (no
    /// `--output-dir`; `cache path`, `rm`, `pull`): the list written for `-P`
    /// names the same URLs everywhere. A tab is never part of a URL (one
    /// given as an argument is still an invalid URL).
    public static func url(ofLine line: String) -> String {
        guard let tab = line.utf8.firstIndex(of: 0x09) else { return line }
        return String(line[..<tab])
    }

    public func name(for url: String) -> String? {
        names.withLock { $0[url] }
    }
}
