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

/// Takes the body of each successful URL of a batch (see `Delivery.receiver`).
public protocol BodyReceiver: Sendable {
    /// Places the body at `body` (the cache's file, or a temporary file that
    /// is removed after this returns) for `url` (as reported: any password
    /// removed). Called once per successful URL, from several threads at
    /// once. A thrown error's text becomes the URL's `io` failure.
    func receive(url: String, body: String, result: LoadResult) throws -> DeliveryReceipt
}

/// What a `BodyReceiver` did with a body, reported with the URL.
public struct DeliveryReceipt: Sendable, Equatable {
    /// The file the body now is at.
    public let path: String
    /// How it got there, e.g. `reflink`, `copy`, `hard link` (JSON's `outputMethod`).
    public let method: String
    /// Why the method asked for was not used (`--link` across file systems:
    /// `no hard link: Invalid cross-device link`); `-v` shows it beside the method.
    public let note: String?

    public init(path: String, method: String, note: String? = nil) {
        self.path = path
        self.method = method
        self.note = note
    }
}
