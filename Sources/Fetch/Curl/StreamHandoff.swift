import Support

/// A large body's writes on their way from the transfer loop to one
/// completion worker (issue 22): the loop copies each chunk into one of a few
/// buffers and goes back to libcurl; the worker hands the buffers to the
/// sink in order (`begin` first), then gives them back.
///
/// Joining: libcurl 7.88 calls the write callback with at most 16 KiB
/// (CURL_MAX_WRITE_SIZE), whatever its receive buffer. A chunk joins the last
/// buffer queued while the worker has not taken it yet and it has room
/// (`Defaults.receiveBufferSize` in all), so a lagging worker gets fewer,
/// larger writes: one job, one `write`, one wake-up per 64 KiB, not per 16.
///
/// Memory: at most `Defaults.streamBuffers` buffers per transfer, each of at
/// most `Defaults.receiveBufferSize` (a chunk larger than that gets one of
/// its own), however large the body. When all are with the worker, the loop
/// pauses the transfer (CURL_WRITEFUNC_PAUSE) and the worker asks the loop
/// to resume it (`resume`) once `Defaults.streamBuffersToResume` are back:
/// each pause costs libcurl a copy of what it holds and the loop a wake-up,
/// so it should let a few buffers' worth through, not one chunk.
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
        /// The buffer queued last, while its job has not started: later
        /// chunks join it (under the lock, which its job takes it under).
        var tail: Buffer?
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

    /// Every chunk queued so far has been written, and the transfer is not
    /// paused: the sink has seen every byte received.
    var isDrained: Bool { state.withLock { !$0.paused && $0.free.count == $0.made } }

    /// Queues the response's `begin` and the body held so far (`held`, taken:
    /// it becomes one of the buffers).
    func begin(status: Int, headers: HTTPHeaders, held: inout [UInt8]) {
        let buffer = Buffer([])
        swap(&buffer.bytes, &held)
        state.withLock { state in
            state.made += 1
            state.tail = buffer
        }
        let sink = sink
        queue(buffer) { bytes in
            try sink.begin(status: status, headers: headers)
            try bytes.withUnsafeBytes { try sink.write($0) }
        }
    }

    /// Queues a copy of `chunk` (joined to the last buffer queued, when its
    /// job has not started and it has room); false when no buffer is free:
    /// the caller pauses the transfer, which `resume` resumes once enough are back.
    func write(_ chunk: UnsafeRawBufferPointer) -> Bool {
        let capacity = Defaults.receiveBufferSize
        let taken = state.withLock { state -> Taken in
            if let tail = state.tail, tail.bytes.count + chunk.count <= capacity {
                tail.bytes.append(contentsOf: chunk)   // under the lock: its job takes the tail under it
                return .joined
            }
            let buffer: Buffer
            if let free = state.free.popLast() {
                buffer = free
            } else if state.made < Defaults.streamBuffers {
                state.made += 1
                buffer = Buffer([])
                buffer.bytes.reserveCapacity(max(capacity, chunk.count))
            } else {
                state.paused = true
                return .none
            }
            buffer.bytes.append(contentsOf: chunk)
            state.tail = buffer
            return .new(buffer)
        }
        switch taken {
        case .joined: return true
        case .none: return false
        case .new(let buffer):
            let sink = sink
            queue(buffer) { bytes in try bytes.withUnsafeBytes { try sink.write($0) } }
            return true
        }
    }

    private enum Taken {
        case joined
        case new(Buffer)
        case none
    }

    /// Runs `write` with the buffer's bytes on the worker (unless the sink
    /// failed before), then gives the buffer back.
    private func queue(_ buffer: Buffer, _ write: @escaping @Sendable ([UInt8]) throws -> Void) {
        let accepted = worker.run { [self] in
            let failed = state.withLock { state -> Bool in
                if state.tail === buffer { state.tail = nil }   // no chunk joins it from here on
                return state.failure != nil
            }
            if !failed {
                do { try write(buffer.bytes) } catch { state.withLock { $0.failure = error } }
            }
            giveBack(buffer)
        }
        if !accepted {
            // Written here, it could overtake the writes still queued: the transfer fails instead.
            state.withLock { state in
                if state.tail === buffer { state.tail = nil }
                state.failure = Stopped()
            }
            giveBack(buffer)
        }
    }

    private func giveBack(_ buffer: Buffer) {
        buffer.bytes.removeAll(keepingCapacity: true)
        let resumes = state.withLock { state -> Bool in
            state.free.append(buffer)
            // Paused, every buffer was out: `free.count` of them are back.
            guard state.paused, state.free.count >= min(Defaults.streamBuffersToResume, state.made) else { return false }
            state.paused = false
            return true
        }
        if resumes { resume() }
    }
}
