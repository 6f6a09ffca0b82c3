import DiskCache

/// Where `ImageLoader.load`, `phases(for:)` and `batch` also put the body of
/// a successful URL, besides the cache: `asyncfetch -o FILE` / `-o -`, or
/// a receiver of every body (`asyncfetch -P DIR`).
///
/// This is the only way to get the body of a `no-store` response, which is
/// never stored (nor of a response the cache could not store): the loader
/// hands it over from its temporary file before that file is removed.
public enum Delivery: Sendable {
    /// A file, created or truncated (mode 0644 before the umask).
    case file(String)
    /// The process's standard output (file descriptor 1).
    case standardOutput
    /// Each successful URL's body, handed to the receiver (a batch into a folder).
    case receiver(any BodyReceiver)

    /// `-` means standard output, anything else a file path.
    public init(argument: String) {
        self = argument == "-" ? .standardOutput : .file(argument)
    }

    /// Why this delivery cannot be used with the cache in `cacheDirectory`, or
    /// nil: a file directly in that directory (or a symbolic link to a file
    /// there, such as an entry's own body) could replace a cache entry, so it
    /// is refused as a `usage` error, as an `OutputDirectory` of the cache
    /// directory itself is (`CacheDirectory.holds`). A folder inside it is fine.
    public func problem(cacheDirectory: String) -> LoadError? {
        guard case .file(let path) = self, CacheDirectory.holds(file: path, directory: cacheDirectory) else { return nil }
        return LoadError(kind: .usage, message: "-o \(path) is in the cache directory; a file there could replace a cache entry (a folder inside it is fine)")
    }

    var name: String {
        switch self {
        case .file(let path): return path
        case .standardOutput: return "standard output"
        case .receiver: return "the receiver"
        }
    }
}
