import Fetch
import Foundation
import Support
import TestSupport

/// A file sink that notes when its body has begun (the response's 2xx head arrived).
final class NotingSink: BodySink, @unchecked Sendable {
    let file: FileSink
    let begun = Locked(false)

    init(path: String) throws { file = try FileSink(path: path) }

    func begin(status: Int, headers: HTTPHeaders) throws {
        begun.withLock { $0 = true }
        try file.begin(status: status, headers: headers)
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        begun.withLock { $0 = true }
        try file.write(bytes)
    }

    func write(whole body: [UInt8]) throws {
        begun.withLock { $0 = true }
        try file.write(whole: body)
    }

    func reset() throws { try file.reset() }
}

/// Cancels many fetch tasks, each at its moment, from one thread of its own (not a
/// timer on the test pool, which a busy machine runs late), and notes when each cancel
/// was issued and when each fetch answered (on its own task, as it returned).
final class MomentCanceller: @unchecked Sendable {
    enum Moment {
        case atOnce
        /// Once the server has received `target` (its path and query).
        case requested(String)
        /// Once the sink's body has begun.
        case bodyBegun(NotingSink)
        /// This many seconds after `run`.
        case after(Double)

        /// Whether the server has the request by this moment.
        var afterTheRequest: Bool {
            switch self {
            case .requested, .bodyBegun: true
            case .atOnce, .after: false
            }
        }
    }

    struct Record: Sendable {
        var cancelledAt: Double?
        /// When its task called `fetch`.
        var startedAt: Double?
        var answeredAt: Double?
        /// Cancelled once the server had the request (its moment was `requested` or `bodyBegun`).
        var midTransfer = false
    }

    private let server: ScriptedServer
    private var moments: [Moment] = []
    private var tasks: [Task<(kind: FetchError.Kind?, bytes: Int64), Never>?] = []
    private let state = Locked([Record]())

    init(_ server: ScriptedServer) { self.server = server }

    /// Adds a fetch to cancel at `moment`; returns its number. Before `run`.
    func add(_ moment: Moment) -> Int {
        moments.append(moment)
        tasks.append(nil)
        state.withLock { $0.append(Record()) }
        return moments.count - 1
    }

    /// The task of fetch `number`. Before `run`.
    func setTask(_ number: Int, _ task: Task<(kind: FetchError.Kind?, bytes: Int64), Never>) { tasks[number] = task }

    /// Fetch `number` is about to call `fetch`, on its task.
    func starting(_ number: Int) { state.withLock { $0[number].startedAt = monotonicSeconds() } }

    /// Fetch `number` has returned.
    func answered(_ number: Int) { state.withLock { $0[number].answeredAt = monotonicSeconds() } }

    /// What happened to each fetch.
    func records() -> [Record] { state.withLock { $0 } }

    /// Starts the thread that cancels each fetch at its moment, unless it has answered by then.
    func run() {
        let (moments, tasks, server, state) = (moments, tasks, server, state)
        Thread.detachNewThread {
            let started = monotonicSeconds()
            var pending = Set(moments.indices)
            while !pending.isEmpty && monotonicSeconds() < started + 30 {
                // The server's record, read only while a cancel waits for it (every 2 ms: its lock is the server's).
                let awaited = pending.contains { if case .requested = moments[$0] { true } else { false } }
                let received = awaited ? Set(server.allRequests.map(\.path)) : []
                for number in pending {
                    let ready: Bool
                    switch moments[number] {
                    case .atOnce: ready = true
                    case .requested(let target): ready = received.contains(target)
                    case .bodyBegun(let sink): ready = sink.begun.withLock { $0 }
                    case .after(let seconds): ready = monotonicSeconds() >= started + seconds
                    }
                    let cancel = state.withLock { records -> Bool? in
                        if records[number].answeredAt != nil { return false }   // answered first: not cancelled
                        guard ready else { return nil }
                        records[number].cancelledAt = monotonicSeconds()
                        records[number].midTransfer = moments[number].afterTheRequest
                        return true
                    }
                    guard let cancel else { continue }
                    pending.remove(number)
                    if cancel { tasks[number]?.cancel() }
                }
                usleep(2_000)
            }
        }
    }
}
