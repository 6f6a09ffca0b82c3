/// The remote tier's one error type, each case with a sentence a person
/// understands (`message`).
public enum RemoteCacheError: Error, Sendable, CustomStringConvertible {
    /// `--remote-cache` (with its `AWS_*` variables) names no tier a request
    /// could reach: a usage error at start-up (`RemoteLocation.parse`).
    case invalidLocation(String)
    /// What the tier sent for a key is not that key's intact object; nothing
    /// was stored (`RemoteObjectSink`).
    case refusedObject(String)

    public var message: String {
        switch self {
        case .invalidLocation(let message), .refusedObject(let message): message
        }
    }

    public var description: String { message }
}
