import enum Support.NearestName
import enum Fetch.Defaults
#if canImport(Glibc)
import Glibc
#endif

/// A URL argument that is no URL but most likely something else the user
/// meant: a mistyped option or command (`version`, `list`, `cahce`), a list
/// that wanted `-i` (`urls.txt`), or a URL without its scheme, which curl
/// and wget complete (`example.com/cat.png`). It is still the per-URL
/// `invalid-url` failure SPEC §3 promises, and the batch goes on; this adds
/// one line on stderr saying what was probably meant (it said only "invalid
/// URL: expected scheme://host/path"). Only arguments: a line of an
/// `--input` list is no slip of the command line.
enum WordHints {
    /// The hints for `urls`, as named on the command line, in order.
    static func hints(for urls: [String]) -> [String] {
        var hints: [String] = []
        for url in urls where !url.contains("://") {
            guard hints.count < Defaults.wordHintLimit else { break }
            if let hint = hint(for: url) { hints.append(hint) }
        }
        return hints
    }

    static func hint(for word: String) -> String? {
        switch LocalFile(word) {
        case .list: return "'\(word)' is a file, not a URL: to fetch the URLs listed in it, use -i \(word)"
        case .other: return "'\(word)' is a local file, not a URL: asyncfetch fetches http:// and https:// URLs"
        case nil: break
        }
        if namesAFile(word) {
            return "'\(word)' is not a URL, and there is no file of that name here (a list of URLs is read with -i FILE)"
        }
        if !word.isEmpty, word.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) {
            let name = word.drop { $0 == "-" }.lowercased()   // after `--`: `-- --verison`
            if CacheCommand.isCommand(name) { return "'\(word)' is not a URL: did you mean 'asyncfetch cache \(name)'?" }
            if let option = NearestName.nearest(to: name, among: optionNames) {
                return "'\(word)' is not a URL: did you mean '--\(option)'?"
            }
            if let command = NearestName.nearest(to: name, among: Set(CacheCommand.names + ["cache"])) {
                return "'\(word)' is not a URL: did you mean 'asyncfetch cache \(command == "cache" ? "…" : command)'?"
            }
        }
        let host = word.prefix { $0 != "/" }
        if host.contains("."), !host.hasPrefix("."),
           host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":") }) {
            return "'\(word)' has no scheme: write https://\(word) or http://\(word) (curl and wget guess http://; asyncfetch does not)"
        }
        return nil
    }

    /// The long options of a fetch run, without their dashes.
    static var optionNames: Set<String> {
        Set((ArgumentCheck.valueOptions.union(ArgumentCheck.flags)).filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2)) }
            + ["no-progress", "version", "help"])
    }

    /// A path whose last name ends as a file's (`urls.txt`, `photos/cat.png`,
    /// `/tmp/photo.jpg`) and whose first part is no host name (`example.com/cat.png` is a URL without its scheme).
    static func namesAFile(_ word: String) -> Bool {
        let last = word.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = last.lastIndex(of: "."), fileExtensions.contains(last[last.index(after: dot)...].lowercased()) else { return false }
        return !word.contains("/") || !word.prefix { $0 != "/" }.contains(".") || word.hasPrefix(".")
    }

    /// Endings of file names rather than of host names (`urls.txt`, `photo.jpg`, `README.md`),
    /// for a word that names no file here: "write https://urls.txt" would be the wrong advice.
    static let fileExtensions: Set<String> = ["txt", "list", "lst", "csv", "tsv", "urls", "json", "jsonl", "md",
                                              "png", "jpg", "jpeg", "gif", "webp", "bmp", "tif", "tiff", "ico",
                                              "avif", "heic", "heif", "jxl", "svg"]

    /// What a word that names a local file most likely is: a list of URLs
    /// (`asyncfetch urls.txt` for `-i urls.txt`) when its first bytes hold a
    /// `://`, or a FIFO (not read here: its bytes are the run's); anything
    /// else (`asyncfetch cat.png`) is some other file, and `-i` would be the
    /// wrong advice.
    enum LocalFile {
        case list, other

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            switch info.st_mode & S_IFMT {
            case S_IFIFO: self = .list
            case S_IFREG: self = Self.startsLikeAList(path) ? .list : .other
            default: return nil
            }
        }

        private static func startsLikeAList(_ path: String) -> Bool {
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            let peek = Defaults.wordHintPeekBytes
            var bytes = [UInt8](repeating: 0, count: peek)
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, peek) }
            guard count > 0 else { return false }
            return String(decoding: bytes[..<count], as: UTF8.self).contains("://")
        }
    }
}
