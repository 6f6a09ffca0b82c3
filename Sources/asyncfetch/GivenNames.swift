import Fetch

/// Names that input lines give their URL's file (`URL<TAB>name`, like
/// curl's url/output pairs in a `-K` file), for `--output-dir`. Keyed by the
/// URL as reported (password removed). A URL listed twice keeps the first
/// name: it is fetched, and placed, once.
final class GivenNames: @unchecked Sendable {
    private let lock = TimedLock()
    private var names: [String: String] = [:]   // guarded by lock

    /// The URL part of an input line, remembering the name after a tab.
    func split(_ line: String) -> String {
        guard let tab = line.firstIndex(of: "\t") else { return line }
        let url = String(line[..<tab])
        let name = String(line[line.index(after: tab)...])
        if !name.isEmpty {
            let key = redactURL(url)
            lock.withLock { if names[key] == nil { names[key] = name } }
        }
        return url
    }

    func name(for url: String) -> String? {
        lock.withLock { names[url] }
    }
}
