/// What one attempt produced, as handed from the loop thread to the waiting task.
enum AttemptOutcome: Sendable {
    case response(AttemptResponse)
    case failure(FetchError)
    /// A redirect chain broke on a connection that died when reused, after
    /// `redirects` hops: the fetch goes on from `url` (see `FetchClient.fetch`).
    case interrupted(FetchError, url: String, redirects: Int)
    /// The owner refused the attempt before anything was sent
    /// (`FetchAttemptGate.refusal`): it fails with this error and is not counted.
    case refused(FetchError)
}
