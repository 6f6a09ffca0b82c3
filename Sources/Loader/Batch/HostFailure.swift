import Fetch

/// Why a host's URLs fail at once: the kind their failures report, and the sentence.
public struct HostFailure: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case connect, timeout, dns }
    public let kind: Kind
    public let message: String

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The kind the host's URLs fail with.
    public var errorKind: FetchError.Kind {
        switch kind {
        case .connect: .connect
        case .timeout: .timeout
        case .dns: .dns
        }
    }
}
