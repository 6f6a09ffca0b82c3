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
    /// `cahce list` (or `cache list` after a URL) is one slip, with one
    /// hint for both words: it was two, "did you mean 'asyncfetch cache …'?"
    /// then "did you mean 'asyncfetch cache list'?".
    static func hints(for urls: [String]) -> [String] {
        var hints: [String] = []
        var index = urls.startIndex
        while index < urls.endIndex, hints.count < Defaults.wordHintLimit {
            let url = urls[index]
            index += 1
            guard !url.contains("://") else { continue }
            let hint = hint(for: url)   // once: a file's first bytes are read to tell a list
            // `cache` (not first: `URL cache list`), or the slip for it, before a cache command.
            if index < urls.endIndex, let command = cacheCommand(urls[index]),
               url.lowercased() == "cache" || hint == cacheHint(url) {
                hints.append("'\(url) \(urls[index])' are not URLs: did you mean 'asyncfetch cache \(command)'?")
                index += 1
                continue
            }
            if let hint { hints.append(hint) }
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
            // `URL cache`: the command's own word, out of place (it was "did you mean '--cache-dir'?",
            // an option whose directory nobody gave); `-- --cache` still gets the option.
            if name == "cache", !word.hasPrefix("-") { return cacheHint(word) }
            if let option = NearestName.nearest(to: name, among: optionNames) {
                return "'\(word)' is not a URL: did you mean '--\(option)'?"
            }
            if let command = nearestCommand(name) {
                return command == "cache" ? cacheHint(word) : "'\(word)' is not a URL: did you mean 'asyncfetch cache \(command)'?"
            }
        }
        if NonURLWord.schemeless(word) != nil {
            return "'\(word)' has no scheme: write https://\(word) or http://\(word) (curl and wget guess http://; asyncfetch does not)"
        }
        return nil
    }

    private static func cacheHint(_ word: String) -> String { "'\(word)' is not a URL: did you mean 'asyncfetch cache …'?" }

    /// A cache command as typed after `cache` (any case), or nil.
    private static func cacheCommand(_ word: String) -> String? {
        let name = word.lowercased()
        return CacheCommand.isCommand(name) ? name : nil
    }

    /// `cache` or the cache command `name` is closest to, if one is close.
    private static func nearestCommand(_ name: String) -> String? {
        NearestName.nearest(to: name, among: Set(CacheCommand.names + ["cache"]))
    }

    /// The long options of a fetch run, without their dashes.
    static var optionNames: Set<String> {
        Set((ArgumentCheck.valueOptions.union(ArgumentCheck.flags)).filter { $0.hasPrefix("--") }.map { String($0.dropFirst(2)) }
            + ["no-progress", "version", "help"])
    }
}
