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

    var name: String {
        switch self {
        case .file(let path): return path
        case .standardOutput: return "standard output"
        case .receiver: return "the receiver"
        }
    }
}
