/// Where `ImageLoader.load`, `phases(for:)` and `batch` also put the body of
/// a successful URL, besides the cache: `asyncfetch -o FILE` / `-o -`.
///
/// This is the only way to get the body of a `no-store` response, which is
/// never stored: the loader copies it from its temporary file before that
/// file is removed.
public enum Delivery: Sendable, Equatable {
    /// A file, created or truncated (mode 0644 before the umask).
    case file(String)
    /// The process's standard output (file descriptor 1).
    case standardOutput

    /// `-` means standard output, anything else a file path.
    public init(argument: String) {
        self = argument == "-" ? .standardOutput : .file(argument)
    }

    var name: String {
        switch self {
        case .file(let path): return path
        case .standardOutput: return "standard output"
        }
    }
}
