/// A request made ready for `FetchClient.start` ahead of time
/// (`FetchClient.prepare`), on any thread: its URL checked, its header
/// lines built and its host's loop hashed once. A batch prepares its
/// revalidations as it reads its list, so the transfer loop that starts
/// each one (at the end of the transfer before it) does not (issue 22).
/// Only for the client that prepared it.
public struct PreparedRequest: Sendable {
    public private(set) var request: FetchRequest
    /// The request's header lines, or why its URL cannot be fetched (thrown at `start`).
    let lines: Result<[String], FetchError>
    let origin: TransferOrigin

    init(request: FetchRequest, lines: Result<[String], FetchError>, origin: TransferOrigin) {
        self.request = request
        self.lines = lines
        self.origin = origin
    }

    /// The request's `FetchRequest.gate`: not part of its header lines, so it may be set after `prepare`.
    public var gate: (any FetchAttemptGate)? {
        get { request.gate }
        set { request.gate = newValue }
    }
}
