/// A request made ready for `FetchClient.start` ahead of time
/// (`FetchClient.prepare`), on any thread: its URL checked, its header
/// lines built and its host's loop hashed once. A batch prepares its
/// revalidations as it reads its list, so the transfer loop that starts
/// each one (at the end of the transfer before it) does not (issue 22).
/// Only for the client that prepared it.
///
/// What `prepare` made is shared by every copy (`Made`): a copy costs a
/// retain and the gate's, not the request's, its header lines' and its
/// origin's (about 15; a batch copied each revalidation's about 8 times
/// between its list and its transfer, 4 k instructions per 304).
public struct PreparedRequest: Sendable {
    private final class Made: Sendable {
        let request: FetchRequest
        let lines: Result<[String], FetchError>
        let origin: TransferOrigin

        init(request: FetchRequest, lines: Result<[String], FetchError>, origin: TransferOrigin) {
            self.request = request
            self.lines = lines
            self.origin = origin
        }
    }

    private let made: Made

    /// The request's `FetchRequest.gate`: not part of its header lines, so it may be set after `prepare`.
    public var gate: (any FetchAttemptGate)?

    /// The request as prepared, with `gate`.
    public var request: FetchRequest {
        var request = made.request
        request.gate = gate
        return request
    }

    /// What `request` holds, read in place (`request` copies every field, its gate set): a new
    /// fetch's first transfer takes these alone (`FetchClient.attempts`).
    var url: String { made.request.url }
    var method: FetchRequest.Method { made.request.method }
    var body: [UInt8] { made.request.body }
    var bodyFile: FetchRequest.BodyFile? { made.request.bodyFile }

    /// The request's header lines, or why its URL cannot be fetched (thrown at `start`).
    var lines: Result<[String], FetchError> { made.lines }
    var origin: TransferOrigin { made.origin }

    init(request: FetchRequest, lines: Result<[String], FetchError>, origin: TransferOrigin) {
        made = Made(request: request, lines: lines, origin: origin)
        gate = request.gate
    }
}
