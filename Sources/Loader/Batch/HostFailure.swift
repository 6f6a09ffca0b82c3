import Fetch

/// Why a host's URLs fail at once: the kind their failures report, the
/// sentence, and the proxy whose failures they were, if they were a proxy's
/// (as `FetchError.proxy` names it: its variable, no user name or password).
public struct HostFailure: Sendable, Equatable {
    public enum Kind: Sendable, Equatable { case connect, timeout, dns }
    public let kind: Kind
    public let message: String
    public let proxy: String?

    public init(kind: Kind, message: String, proxy: String? = nil) {
        self.kind = kind
        self.message = message
        self.proxy = proxy
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
