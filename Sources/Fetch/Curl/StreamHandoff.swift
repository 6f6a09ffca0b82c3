import Support

/// A large body's writes on their way from the transfer loop to one
/// completion worker (issue 22): the loop copies each chunk into one of a few
/// buffers and goes back to libcurl; the worker hands the buffers to the
/// sink in order (`begin` first), then gives them back.
///
/// Memory: at most `Defaults.streamBuffers` buffers per transfer, each the
/// size of one chunk (at most libcurl's receive buffer,
/// `Defaults.receiveBufferSize`), however large the body. When all are
/// with the worker, the loop pauses the transfer (CURL_WRITEFUNC_PAUSE) and
/// the worker, giving a buffer back, asks the loop to resume it (`resume`).
///
/// Failures: a sink that throws is remembered (`failure`); the loop aborts
/// the transfer at its next chunk, and a transfer that ended first fails
/// with it (`CurlTransfer.finish`). Later buffers are dropped unwritten.
///
/// Order: every job of a transfer goes to its one worker, whose queue is
/// first in, first out, and `CurlTransfer.finish` answers the transfer on
/// that worker too, after the last write: its owner sees the sink only once
/// the writes are done (a retry's `reset`, a cancelled load's cleanup).
final class StreamHandoff: Sendable {
    let worker: CompletionWorker
    private let sink: BodySink
    /// Asks the loop to resume the paused transfer (`CurlLoop.resume`).
    private let resume: @Sendable () -> Void

    /// One buffer, passed whole between the loop and the worker (a class, so
    /// that neither side holds a second reference to the bytes: emptying it
    /// keeps its memory, no copy on write).
    private final class Buffer: @unchecked Sendable {
        var bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
    }

    /// The client stopped while a body was streaming: nothing takes the writes.
    struct Stopped: Error, CustomStringConvertible {
        var description: String { "the fetch client stopped" }
    }

    private struct State {
        /// Buffers back from the worker, emptied, capacity kept.
        var free: [Buffer] = []
        /// Buffers made so far (at most `Defaults.streamBuffers`).
        var made = 0
        /// The loop paused the transfer for want of a buffer.
        var paused = false
        var failure: (any Error)?
    }

    private let state = Locked(State())

    init(worker: CompletionWorker, sink: BodySink, resume: @escaping @Sendable () -> Void) {
        self.worker = worker
        self.sink = sink
        self.resume = resume
    }

    /// What the sink threw, if it did.
    var failure: (any Error)? { state.withLock { $0.failure } }

    /// Queues the response's `begin` and the body held so far (`held`, taken:
    /// it becomes one of the buffers).
    func begin(status: Int, headers: HTTPHeaders, held: inout [UInt8]) {
        state.withLock { $0.made += 1 }
        let buffer = Buffer([])
        swap(&buffer.bytes, &held)
        let sink = sink
        queue(buffer) { bytes in
            try sink.begin(status: status, headers: headers)
            try bytes.withUnsafeBytes { try sink.write($0) }
        }
    }

    /// Queues a copy of `chunk`; false when no buffer is free: the caller
    /// pauses the transfer, which `resume` resumes once one is back.
    func write(_ chunk: UnsafeRawBufferPointer) -> Bool {
        let taken = state.withLock { state -> Buffer? in
            if let buffer = state.free.popLast() { return buffer }
            if state.made < Defaults.streamBuffers {
                state.made += 1
                return Buffer([])
            }
            state.paused = true
            return nil
        }
        guard let buffer = taken else { return false }
        buffer.bytes.append(contentsOf: chunk)
        let sink = sink
        queue(buffer) { bytes in try bytes.withUnsafeBytes { try sink.write($0) } }
        return true
    }

    /// Runs `write` with the buffer's bytes on the worker (unless the sink
    /// failed before), then gives the buffer back.
    private func queue(_ buffer: Buffer, _ write: @escaping @Sendable ([UInt8]) throws -> Void) {
        let accepted = worker.run { [self] in
            if failure == nil {
                do { try write(buffer.bytes) } catch { state.withLock { $0.failure = error } }
            }
            giveBack(buffer)
        }
        if !accepted {
            // Written here, it could overtake the writes still queued: the transfer fails instead.
            state.withLock { $0.failure = Stopped() }
            giveBack(buffer)
        }
    }

    private func giveBack(_ buffer: Buffer) {
        buffer.bytes.removeAll(keepingCapacity: true)
        let wasPaused = state.withLock { state -> Bool in
            state.free.append(buffer)
            defer { state.paused = false }
            return state.paused
        }
        if wasPaused { resume() }
    }
}
