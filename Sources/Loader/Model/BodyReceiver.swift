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
