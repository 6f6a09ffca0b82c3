/// Where a transfer's body goes, chunk by chunk, so that no body is ever held
/// whole in memory.
///
/// Threading: the engine calls a sink one call at a time, only between
/// `fetch` (or `start`) being called and it returning (or completing): from
/// its transfer loop thread while a large body streams, or, for a body small
/// enough to be held in memory (`Defaults.bufferedBodyLimit`), from the
/// awaiting task (`fetch`) or a completion worker (`start`), never two at
/// once. A sink must not be shared between concurrent fetches.
public protocol BodySink: AnyObject, Sendable {
    /// Called once per attempt with a 2xx response's status and headers,
    /// before its first `write` (on whichever thread then writes). Throwing
    /// aborts the transfer with kind `.io`. The default does nothing.
    func begin(status: Int, headers: HTTPHeaders) throws
    /// Appends bytes of a 2xx body. Throwing aborts the transfer with kind `.io`
    /// (the error's description becomes the detail).
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// A whole 2xx body that was held in memory, in place of one `write`
    /// (the default makes it one `write`).
    func write(whole body: [UInt8]) throws
    /// Discards everything written so far: a retried attempt starts over.
    func reset() throws
    /// Whether the body, as written so far followed by `held` (bytes the
    /// transfer holds and has not written yet), has already ended by its
    /// own structure (an image whose last chunk arrived): a server that then
    /// stops short of its `Content-Length` has stalled, it is not slow
    /// (`FetchConfiguration.endedBodyStallTime`). The default says no: the
    /// stall is left to the low-speed abort.
    ///
    /// Threading: called on the transfer loop thread, rarely (a body that
    /// stopped arriving), while the writes may run on another thread (a
    /// completion worker that has written every byte received): it must not
    /// read state those writes change without synchronisation.
    func hasEnded(held: UnsafeRawBufferPointer) -> Bool
}

extension BodySink {
    public func begin(status: Int, headers: HTTPHeaders) throws {}

    public func hasEnded(held: UnsafeRawBufferPointer) -> Bool { false }

    /// Writes the body's bytes; a sink that keeps bytes may keep the array
    /// instead of a copy (`CacheSink`: the image head).
    public func write(whole body: [UInt8]) throws {
        try body.withUnsafeBytes { try write($0) }
    }
}
