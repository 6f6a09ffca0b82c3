#if canImport(Glibc)
import Glibc
#endif
import Fetch

/// What an argument that is no URL most likely names instead, for a word a
/// user typed where a URL goes (`asyncfetch urls.txt`, `asyncfetch
/// cat.png`, `asyncfetch example.com/cat.png`). It stays the per-URL
/// `invalid-url` failure SPEC §3 promises; this only tells what to say
/// about it (the tool's `WordHints` words it).
public enum NonURLWord: Sendable, Equatable {
    /// A file whose first bytes hold a `://` (a list of URLs: `-i` was
    /// meant), or a FIFO (not read here: its bytes are the run's).
    case listFile
    /// Any other file (`cat.png`): `-i` would be the wrong advice.
    case otherFile
    /// No file of that name, but it ends as a file's name does (`urls.txt`,
    /// `photos/cat.png`): "write https://urls.txt" would be the wrong advice.
    case missingFile
    /// A URL without its scheme (`example.com/cat.png`), which curl and wget complete.
    case schemelessURL

    /// `word` as a file: one that is there (`listFile`, `otherFile`), or a
    /// name that ends as a file's and is no host name (`missingFile`); nil otherwise.
    public static func file(named word: String) -> NonURLWord? {
        var info = stat()
        if stat(word, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFIFO: return .listFile
            case S_IFREG: return startsLikeAList(word) ? .listFile : .otherFile
            default: return nil
            }
        }
        return namesAFile(word) ? .missingFile : nil
    }

    /// `schemelessURL` when `word` starts with a host name (a dot in it, no
    /// character a host name cannot hold); nil otherwise.
    public static func schemeless(_ word: String) -> NonURLWord? {
        let host = word.prefix { $0 != "/" }
        guard host.contains("."), !host.hasPrefix("."),
              host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":") })
        else { return nil }
        return .schemelessURL
    }

    /// Endings of file names rather than of host names (`urls.txt`, `photo.jpg`, `README.md`).
    static let fileExtensions: Set<String> = ["txt", "list", "lst", "csv", "tsv", "urls", "json", "jsonl", "md",
                                              "png", "jpg", "jpeg", "gif", "webp", "bmp", "tif", "tiff", "ico",
                                              "avif", "heic", "heif", "jxl", "svg"]

    /// A path whose last name ends as a file's (`urls.txt`, `photos/cat.png`, `/tmp/photo.jpg`)
    /// and whose first part is no host name (`example.com/cat.png` is a URL without its scheme).
    private static func namesAFile(_ word: String) -> Bool {
        let last = word.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = last.lastIndex(of: "."), fileExtensions.contains(last[last.index(after: dot)...].lowercased()) else { return false }
        return !word.contains("/") || !word.prefix { $0 != "/" }.contains(".") || word.hasPrefix(".")
    }

    /// Whether the first `Defaults.nonURLPeekBytes` of the file at `path` hold a `://`.
    private static func startsLikeAList(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let peek = Defaults.nonURLPeekBytes
        var bytes = [UInt8](repeating: 0, count: peek)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, peek) }
        guard count > 0 else { return false }
        return String(decoding: bytes[..<count], as: UTF8.self).contains("://")
    }
}
