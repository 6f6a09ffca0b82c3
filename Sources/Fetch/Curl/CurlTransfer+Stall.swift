extension CurlTransfer {
    /// The failure of a 2xx body that has ended by its own structure (an
    /// image whose last chunk arrived: `BodySink.hasEnded`) and then received
    /// nothing for `stallTime` seconds, short of its `Content-Length`: the
    /// server announced more than it sent and stalled. Such a response is
    /// incomplete and is never stored as whole; waiting for the low-speed
    /// abort (30 s per attempt, each a timeout that is retried and counts
    /// towards giving the host up) says nothing more. Nil otherwise, and
    /// for a coded body (its end is the decoder's to say), a body still on
    /// its way to the sink (a paused or lagging `handoff`) or one the sink
    /// cannot judge (`--any`).
    ///
    /// Called by the loop's stall sweep (`CurlLoop.sweepStalls`), on the loop
    /// thread; `now` is `monotonicSeconds()`.
    func endedBodyStall(now: Double, after stallTime: Double) -> FetchError? {
        guard deliverBody, decoder == nil, bodyBytes > 0, let declared = head.contentLength, bodyBytes < declared else {
            return nil
        }
        // Bytes that arrived, or a body still on its way to the sink (the
        // transfer paused for a lagging worker, or not yet resumed after
        // one caught up): the server has not been silent, so its quiet
        // time starts over.
        if bodyBytes != sweptBytes || !(handoff?.isDrained ?? true) {
            sweptBytes = bodyBytes
            quietSince = now
            return nil
        }
        guard now - quietSince >= stallTime,
              bufferedBody.withUnsafeBytes({ spec.sink.hasEnded(held: $0) }) else { return nil }
        let seconds = (now - quietSince).rounded(.down)
        return FetchError(.network, url: spec.url,
                          detail: "the server stopped sending after the image ended: \(bodyBytes) of \(declared) bytes "
                              + "(Content-Length) arrived, then nothing for \(Int(seconds)) s; an incomplete response is not stored")
    }
}
