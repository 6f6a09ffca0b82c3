import enum Support.NearestName
import enum Fetch.Defaults
import enum Loader.NonURLWord

/// A URL argument that is no URL but most likely something else the user
/// meant: a mistyped option or command (`version`, `list`, `cahce`), a list
/// that wanted `-i` (`urls.txt`), or a URL without its scheme, which curl
/// and wget complete (`example.com/cat.png`). It is still the per-URL
/// `invalid-url` failure SPEC §3 promises, and the batch goes on; this adds
/// one line on stderr saying what was probably meant (it said only "invalid
/// URL: expected scheme://host/path"). Only arguments: a line of an
/// `--input` list is no slip of the command line. What a file or a host
/// name is, is Loader's `NonURLWord`; the options and commands are the tool's.
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
        switch NonURLWord.file(named: word) {
        case .listFile: return "'\(word)' is a file, not a URL: to fetch the URLs listed in it, use -i \(word)"
        case .otherFile: return "'\(word)' is a local file, not a URL: asyncfetch fetches http:// and https:// URLs"
        case .missingFile:
            return "'\(word)' is not a URL, and there is no file of that name here (a list of URLs is read with -i FILE)"
        case .schemelessURL, nil: break
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
        if NonURLWord.schemeless(word) != nil {
            return "'\(word)' has no scheme: write https://\(word) or http://\(word) (curl and wget guess http://; asyncfetch does not)"
        }
        return nil
    }

    /// The long options of a fetch run, without their dashes.
    static var optionNames: Set<String> {
        Set((ArgumentCheck.valueOptions.union(ArgumentCheck.flags)).filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2)) }
            + ["no-progress", "version", "help"])
    }
}
