#if canImport(Glibc)
import Glibc
#endif
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
        guard let tab = Self.tab(in: line) else { return line }
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
        guard let tab = tab(in: line) else { return line }
        return String(line[..<tab])
    }

    /// Where `line`'s first tab is, by one `memchr` over its bytes in place:
    /// every input line is asked, and `utf8.firstIndex(of:)` went through
    /// the view byte by byte (~950 instructions for a 30-byte URL).
    private static func tab(in line: String) -> String.Index? {
        let offset = withUTF8Bytes(of: line) { bytes -> Int? in
            guard let base = bytes.baseAddress, let found = memchr(base, 0x09, bytes.count) else { return nil }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
        }
        return offset.map { line.utf8.index(line.utf8.startIndex, offsetBy: $0) }
    }

    public func name(for url: String) -> String? {
        names.withLock { $0[url] }
    }
}
