@testable import Fetch
import Foundation
import Support
import Testing
import TestSupport

/// `FetchClient.start`: a fetch without a Swift task. A first answer
/// completes on a completion worker (no task runs the completion, and the
/// transfer loop goes on meanwhile; a large body streams there); a retry
/// goes on on a task with the same rules as `fetch`; a handle cancels it
/// before or while it runs, and the completion comes exactly once.
@Suite(.timeLimit(.minutes(3))) struct FetchStartTests {
    static let png = Array("\u{89}PNG\r\n\u{1A}\n".utf8) + Array(repeating: 7, count: 500)

    /// What one completion saw.
    struct Completed: Sendable {
        let result: Result<FetchResponse, FetchError>
        /// The completion ran inside a Swift task.
        let onTask: Bool
        /// The name of the thread it ran on.
        let thread: String
        /// When it ran (`monotonicSeconds`).
        let at: Double
    }

    /// The calling thread's name (`top -H` shows it).
    static func currentThreadName() -> String {
        let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
        return comm.trimmingCharacters(in: .newlines)
    }

    /// Starts `url` and waits for its one completion (and fails on a second).
    static func start(_ client: FetchClient, _ url: String, into sink: BodySink, handle: FetchHandle = FetchHandle(),
                      afterStart: @Sendable () -> Void = {}) async -> (Completed, calls: Int) {
        let calls = Locked(0)
        let completed: Completed = await withCheckedContinuation { continuation in
            client.start(FetchRequest(url: url), into: sink, handle: handle) { result in
                let onTask = withUnsafeCurrentTask { $0 != nil }
                let first = calls.withLock { count -> Bool in
                    count += 1
                    return count == 1
                }
                if first { continuation.resume(returning: Completed(result: result, onTask: onTask, thread: currentThreadName(),
                                                                     at: monotonicSeconds())) }
            }
            afterStart()
        }
        try? await Task.sleep(nanoseconds: 100_000_000)   // a second completion would come by now
        return (completed, calls.withLock { $0 })
    }

    @Test func aFirstAnswerCompletesOnACompletionWorkerWithTheBodyInTheSink() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("a"))
        defer { sink.remove() }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/a.png"), into: sink)
        let response = try completed.result.get()
        #expect(response.status == 200)
        #expect(response.attempts == 1)
        #expect(!completed.onTask, "a first answer completes on a completion worker, not on a task")
        #expect(completed.thread.hasPrefix("cache-worker-"), "ran on \(completed.thread), not a completion worker")
        #expect(calls == 1)
        try sink.close()
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: sink.path))) == Self.png)
    }

    /// A 304 has no body for the sink: handing its completion to a worker cost
    /// more CPU than the completion, per transfer and in a round's batch alike
    /// (issue 22), so it runs on the loop's thread.
    @Test func aFirst304CompletesOnTheTransferLoopAndLeavesTheSinkUntouched() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .notModified(headers: [("ETag", "\"v1\"")]))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("a"))
        defer { sink.remove() }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/a.png"), into: sink)
        let response = try completed.result.get()
        #expect(response.status == 304)
        #expect(response.headers["ETag"] == "\"v1\"")
        #expect(!completed.onTask, "a first 304 completes on its loop, not on a task")
        #expect(completed.thread.hasPrefix("curl-loop-"), "ran on \(completed.thread), not the transfer loop")
        #expect(calls == 1)
        try sink.close()
        #expect(try Data(contentsOf: URL(fileURLWithPath: sink.path)).isEmpty)
    }

    /// What a first 304's completion hands off (`FetchHandle.handOff`: a
    /// cache load's record update and result) runs once, on a completion
    /// worker, after the completion itself has returned on the loop.
    @Test func workA304HandsOffRunsOnceOnACompletionWorker() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .notModified(headers: [("ETag", "\"v1\"")]))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("a"))
        defer { sink.remove() }
        let client = FetchClient()   // kept to the end: a client that goes stops its workers
        let handle = FetchHandle()
        let runs = Locked([String]())
        let (completerThread, workerThread): (String, String) = await withCheckedContinuation { continuation in
            client.start(FetchRequest(url: server.url("/a.png")), into: sink, handle: handle) { _ in
                let completer = Self.currentThreadName()
                handle.handOff {
                    let first = runs.withLock { runs -> Bool in
                        runs.append(Self.currentThreadName())
                        return runs.count == 1
                    }
                    if first { continuation.resume(returning: (completer, Self.currentThreadName())) }
                }
            }
        }
        try? await Task.sleep(nanoseconds: 100_000_000)   // a second run would come by now
        withExtendedLifetime(client) {}
        #expect(completerThread.hasPrefix("curl-loop-"), "the 304 completed on \(completerThread)")
        #expect(workerThread.hasPrefix("cache-worker-"), "the handed-off work ran on \(workerThread)")
        #expect(runs.withLock { $0.count } == 1)
    }

    /// What 304s' completions give for their round's end (`FetchHandle.atRoundEnd`:
    /// a batch gives their slots back to its scheduler in one step) reaches
    /// the owner's work once each, on the transfer loop, before the work those
    /// completions hand off (`handOff`) runs: a round's end comes before its
    /// hand-offs go to a worker.
    @Test func itemsGivenForARoundsEndReachItsWorkOnceBeforeTheRoundsHandOffs() async throws {
        final class Item: Sendable {
            let id: Int
            init(_ id: Int) { self.id = id }
        }
        let server = try ScriptedServer()
        server.route("/a.png", .notModified(headers: [("ETag", "\"v1\"")]))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let client = FetchClient()   // kept to the end: a client that goes stops its workers
        let owner = Item(-1)
        let count = 24
        let log = Locked([String]())
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let jobs = Locked(0)
            for id in 0..<count {
                let sink = try! FileSink(path: temp.file("a\(id)"))
                let handle = FetchHandle()
                client.start(FetchRequest(url: server.url("/a.png")), into: sink, handle: handle) { _ in
                    handle.atRoundEnd(for: owner, with: Item(id)) { items in
                        let ids = items.compactMap { ($0 as? Item)?.id }.map(String.init).joined(separator: ",")
                        log.withLock { $0.append("end \(Self.currentThreadName()) \(ids)") }
                    }
                    handle.handOff {
                        log.withLock { $0.append("job \(id)") }
                        if jobs.withLock({ jobs -> Bool in
                            jobs += 1
                            return jobs == count
                        }) { continuation.resume() }
                    }
                }
            }
        }
        try? await Task.sleep(nanoseconds: 100_000_000)   // a second run would come by now
        withExtendedLifetime(client) {}
        let lines = log.withLock { $0 }
        var endOf: [Int: Int] = [:]   // item → the line of the round end that had it
        for (index, line) in lines.enumerated() where line.hasPrefix("end ") {
            let parts = line.split(separator: " ")
            #expect(parts[1].hasPrefix("curl-loop-"), "a round's end ran on \(parts[1])")
            for id in parts[2].split(separator: ",").compactMap({ Int($0) }) {
                #expect(endOf[id] == nil, "item \(id) given to the work twice")
                endOf[id] = index
            }
        }
        #expect(endOf.count == count)
        for (index, line) in lines.enumerated() where line.hasPrefix("job ") {
            let id = Int(line.dropFirst(4))!
            #expect((endOf[id] ?? Int.max) < index, "job \(id) ran before its round's end")
        }
    }

    /// `prepare` then `start` (how a batch starts its revalidations): the
    /// request goes out with its headers; a URL that cannot be fetched fails
    /// at `start`, with the error an unprepared start gives.
    @Test func aPreparedRequestIsSentAsMadeAndABadURLFailsAtItsStart() async throws {
        let server = try ScriptedServer()
        server.route("/a.png") { (request: RecordedRequest) -> ScriptedResponse in
            request.header("If-None-Match") == "\"v1\"" ? .notModified(headers: [("ETag", "\"v1\"")]) : .ok(Self.png)
        }
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("a"))
        defer { sink.remove() }
        let client = FetchClient()
        func started(_ prepared: PreparedRequest) async -> Result<FetchResponse, FetchError> {
            await withCheckedContinuation { continuation in
                client.start(prepared, into: sink, handle: FetchHandle()) { continuation.resume(returning: $0) }
            }
        }
        let conditional = client.prepare(FetchRequest(url: server.url("/a.png"), headers: ["If-None-Match": "\"v1\""]))
        #expect(try await started(conditional).get().status == 304)
        #expect(server.requests("/a.png").last?.header("If-None-Match") == "\"v1\"")
        for bad in ["ftp://127.0.0.1/a.png", "http://"] {
            let unprepared: Result<FetchResponse, FetchError> = await withCheckedContinuation { continuation in
                client.start(FetchRequest(url: bad), into: sink, handle: FetchHandle()) { continuation.resume(returning: $0) }
            }
            guard case .failure(let error) = await started(client.prepare(FetchRequest(url: bad))),
                  case .failure(let expected) = unprepared else { Issue.record("\(bad) was fetched"); continue }
            #expect(error.kind == expected.kind && error.detail == expected.detail && error.attempts == expected.attempts, "\(bad)")
        }
        #expect(server.requestCount("/a.png") == 1)
    }

    @Test func aRetryGoesOnOnATaskAndCountsItsAttempts() async throws {
        let server = try ScriptedServer()
        server.route("/flaky.png", [.status(503), .ok(Self.png)])
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("flaky"))
        defer { sink.remove() }
        var configuration = FetchConfiguration()
        configuration.retries = 2
        configuration.retryBaseDelay = 0.01
        let (completed, calls) = await Self.start(FetchClient(configuration: configuration), server.url("/flaky.png"), into: sink)
        let response = try completed.result.get()
        #expect(response.attempts == 2)
        #expect(completed.onTask, "after a failed attempt the fetch goes on on a task")
        #expect(calls == 1)
        #expect(server.requestCount("/flaky.png") == 2)
        try sink.close()
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: sink.path))) == Self.png)
    }

    /// A fetch without a gate that fails for good (no retry left) completes as a first answer
    /// does, on a completion worker: no task is made for it (the remote tier's reads, one 404 per
    /// object it lacks). Before, it went on on a Swift task.
    @Test func aFinalErrorStatusFailsWithItsStatus() async throws {
        let server = try ScriptedServer()
        server.route("/gone.png", .status(404))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("gone"))
        defer { sink.remove() }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/gone.png"), into: sink)
        guard case .failure(let error) = completed.result else { Issue.record("a 404 succeeded"); return }
        #expect(error.kind == .http)
        #expect(error.status == 404)
        #expect(error.attempts == 1)
        #expect(calls == 1)
        #expect(!completed.onTask, "a final failure completes on a completion worker, not on a task")
        #expect(completed.thread.hasPrefix("cache-worker-"), "ran on \(completed.thread), not a completion worker")

        // So does a refused connection with no retry left.
        let closed = try ScriptedServer()
        let deadURL = closed.url("/a.png")
        closed.stop()
        var configuration = FetchConfiguration()
        configuration.retries = 0
        let (refused, refusedCalls) = await Self.start(FetchClient(configuration: configuration), deadURL, into: sink)
        guard case .failure(let connect) = refused.result else { Issue.record("a closed port answered"); return }
        #expect(connect.kind == .connect && connect.attempts == 1, "\(connect)")
        #expect(refusedCalls == 1)
        #expect(!refused.onTask && refused.thread.hasPrefix("cache-worker-"), "ran on \(refused.thread)")
    }

    @Test func aHandleCancelledBeforeTheStartFailsCancelledWithoutARequest() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(Self.png))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("early"))
        defer { sink.remove() }
        let handle = FetchHandle()
        handle.cancel()
        let (completed, calls) = await Self.start(FetchClient(), server.url("/a.png"), into: sink, handle: handle)
        guard case .failure(let error) = completed.result else { Issue.record("a cancelled fetch succeeded"); return }
        #expect(error.kind == .cancelled)
        #expect(calls == 1)
        #expect(server.requestCount("/a.png") == 0)
    }

    @Test func cancellingTheHandleStopsATransferInFlight() async throws {
        let server = try ScriptedServer()
        // The server answers after 60 s (a stop wakes it): a completion that waited for it comes a
        // minute after the cancel, one the cancel brought comes at once, or seconds later on a busy
        // machine (`swift test --parallel` on two cores saw over 1 s).
        var slow = ScriptedResponse.ok(Self.png)
        slow.delayBeforeHeaders = 60
        server.route("/slow.png", slow)
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("slow"))
        defer { sink.remove() }
        let handle = FetchHandle()
        // Cancelled once the server has the request, from a thread of its own (not a timer
        // on the test pool, which a busy machine runs late).
        let canceller = Canceller(handle) { server.requestCount("/slow.png") >= 1 }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/slow.png"), into: sink, handle: handle)
        guard case .failure(let error) = completed.result else { Issue.record("a cancelled fetch succeeded"); return }
        #expect(error.kind == .cancelled)
        #expect(calls == 1)
        let after = completed.at - canceller.cancelledAt()
        #expect(after < 10, "the cancel stops the transfer (\(after) s after it), not the server's 60 s")
    }

    /// Cancels `handle` from a thread of its own as soon as `ready` holds (or after 10 s): a
    /// timer on the test pool, which a busy machine runs late, could fire after the transfer ended.
    final class Canceller: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var at = 0.0
        /// What `ready` was checked against: the sink's writes when it held, for one.
        private(set) var seenWhenCancelled = 0

        init(_ handle: FetchHandle, whenSeen seen: @escaping @Sendable () -> Int = { 0 },
             ready: @escaping @Sendable () -> Bool) {
            Thread.detachNewThread { [self] in
                let deadline = monotonicSeconds() + 10
                while !ready() && monotonicSeconds() < deadline { usleep(1000) }
                seenWhenCancelled = seen()
                at = monotonicSeconds()
                handle.cancel()
                done.signal()
            }
        }

        /// When the handle was cancelled (`monotonicSeconds`), once it was.
        func cancelledAt() -> Double {
            done.wait()
            done.signal()
            return at
        }
    }

    /// A sink whose first `write` blocks until `release` (or `limit` seconds, which only ends
    /// a hang), as a slow disk would; `left` once a write has returned.
    final class BlockingSink: BodySink, @unchecked Sendable {
        private let released = Locked(false)
        let entered = Locked(false)
        let left = Locked(false)
        let limit: Double

        init(limit: Double) { self.limit = limit }

        func release() { released.withLock { $0 = true } }

        func write(_ bytes: UnsafeRawBufferPointer) throws {
            entered.withLock { $0 = true }
            let deadline = monotonicSeconds() + limit
            while !released.withLock({ $0 }) && monotonicSeconds() < deadline { usleep(1000) }
            left.withLock { $0 = true }
        }

        func reset() throws {}
    }

    @Test func aCompletionThatBlocksDoesNotHoldTheOtherTransfersOfItsLoop() async throws {
        let server = try ScriptedServer()
        server.route("/slow-disk.png", .ok(Self.png))
        server.route("/b.png", .ok(Self.png))
        var configuration = FetchConfiguration()
        configuration.transferLoops = 1   // both transfers on one loop, as one host's are
        configuration.completionWorkers = 2
        let client = FetchClient(configuration: configuration)
        // Released by the test once the second transfer is done; the 120 s only ends a hang
        // (a loop held by the blocked sink finishes the second transfer after it, and fails below).
        let blocking = BlockingSink(limit: 120)
        defer { blocking.release() }
        let first = Task { await Self.start(client, server.url("/slow-disk.png"), into: blocking) }
        // A set-up wait: it ends as soon as the body is there (seconds on a busy machine).
        #expect(await eventually(within: 30) { blocking.entered.withLock { $0 } }, "the first body never reached its sink")
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try FileSink(path: temp.file("b"))
        defer { sink.remove() }
        // While the first completion is still blocked in its sink, the loop runs the second transfer to its end:
        // an order, not a time (the first's sink is let go of only after).
        let (second, calls) = await Self.start(client, server.url("/b.png"), into: sink)
        #expect(!blocking.left.withLock { $0 }, "the second transfer waited for the first one's sink")
        #expect(try second.result.get().status == 200)
        #expect(calls == 1)
        blocking.release()
        let (firstCompleted, firstCalls) = await first.value
        #expect(try firstCompleted.result.get().status == 200)
        #expect(firstCalls == 1)
    }

    @Test func aClientLetGoOfWhileItsFetchesRunStillCompletesEachOnce() async throws {
        let server = try ScriptedServer()
        for index in 0..<16 { server.route("/\(index).png", .ok(Self.png)) }
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let calls = Locked([Int](repeating: 0, count: 16))
        let statuses = Locked([Int](repeating: 0, count: 16))
        var sinks: [FileSink] = []
        for index in 0..<16 { sinks.append(try FileSink(path: temp.file("\(index)"))) }
        defer { for sink in sinks { sink.remove() } }
        do {
            // Only the fetches hold the client: the last completion lets it go, on a worker thread.
            let client = FetchClient()
            for index in 0..<16 {
                client.start(FetchRequest(url: server.url("/\(index).png")), into: sinks[index], handle: FetchHandle()) { result in
                    calls.withLock { $0[index] += 1 }
                    statuses.withLock { $0[index] = (try? result.get().status) ?? -1 }
                }
            }
        }
        #expect(await eventually(within: 10) { calls.withLock { $0.allSatisfy { $0 >= 1 } } })
        try? await Task.sleep(nanoseconds: 100_000_000)   // a second completion would come by now
        #expect(calls.withLock { $0 } == Array(repeating: 1, count: 16))
        #expect(statuses.withLock { $0 } == Array(repeating: 200, count: 16))
    }

    /// A loop hands a round's finished transfers to a worker in one batch
    /// (issue 22): over one host (one loop), many fetches with 2xx and 304
    /// answers, some of their handles cancelled while the batch runs, each
    /// complete exactly once; every one not cancelled succeeds with its own
    /// body in its own sink.
    @Test func manyFetchesOfOneHostEachCompleteOnceWithTheirOwnAnswerSomeCancelled() async throws {
        let count = 240
        let server = try ScriptedServer()
        func body(_ index: Int) -> [UInt8] { Self.png + Array(String(index).utf8) }
        for index in 0..<count {
            server.route("/\(index).png", index % 2 == 0 ? .ok(body(index)) : .notModified(headers: [("ETag", "\"\(index)\"")]))
        }
        var configuration = FetchConfiguration()
        configuration.transferLoops = 1   // one host's transfers: one loop
        configuration.completionWorkers = 2
        configuration.maxConcurrentTransfers = 8   // rounds of several transfers, the rest waiting for a slot
        let client = FetchClient(configuration: configuration)
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sinks = try (0..<count).map { try FileSink(path: temp.file("\($0)")) }
        defer { for sink in sinks { sink.remove() } }
        let results = Locked([[Result<FetchResponse, FetchError>]](repeating: [], count: count))
        let handles = (0..<count).map { _ in FetchHandle() }
        for index in 0..<count {
            client.start(FetchRequest(url: server.url("/\(index).png")), into: sinks[index], handle: handles[index]) { result in
                results.withLock { $0[index].append(result) }
            }
            if index % 3 == 2 { handles[index - 1].cancel() }   // started a moment ago: waiting, running or done
        }
        #expect(await eventually(within: 20) { results.withLock { $0.allSatisfy { !$0.isEmpty } } }, "some fetches never completed")
        try? await Task.sleep(nanoseconds: 200_000_000)   // a second completion would come by now
        let all = results.withLock { $0 }
        #expect(all.allSatisfy { $0.count == 1 }, "completions per fetch: \(all.map(\.count))")
        for index in 0..<count {
            guard let result = all[index].first else { continue }
            let cancelled = index % 3 == 1
            switch result {
            case .success(let response):
                #expect(response.status == (index % 2 == 0 ? 200 : 304), "fetch \(index)")
                try sinks[index].close()
                let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: sinks[index].path)))
                #expect(written == (index % 2 == 0 ? body(index) : []), "fetch \(index)'s sink")
            case .failure(let error):
                #expect(cancelled && error.kind == .cancelled, "fetch \(index): \(error)")
            }
        }
    }

    /// A file sink that notes the threads it is written from, and can be slow or refuse a write.
    final class WatchedSink: BodySink, @unchecked Sendable {
        let file: FileSink
        let writeDelay: useconds_t
        let failAtWrite: Int?
        /// `lastEnd`: when the latest write returned (`monotonicSeconds`).
        let seen = Locked((threads: Set<String>(), writes: 0, largest: 0, lastEnd: 0.0))

        init(path: String, writeDelay: useconds_t = 0, failAtWrite: Int? = nil) throws {
            file = try FileSink(path: path)
            self.writeDelay = writeDelay
            self.failAtWrite = failAtWrite
        }

        struct Refused: Error, CustomStringConvertible {
            var description: String { "the disk refused it" }
        }

        func write(_ bytes: UnsafeRawBufferPointer) throws {
            let count = seen.withLock { seen -> Int in
                seen.threads.insert(FetchStartTests.currentThreadName())
                seen.writes += 1
                seen.largest = max(seen.largest, bytes.count)
                return seen.writes
            }
            if count == failAtWrite { throw Refused() }
            if writeDelay > 0 { usleep(writeDelay) }
            try file.write(bytes)
            seen.withLock { $0.lastEnd = monotonicSeconds() }
        }

        func reset() throws { try file.reset() }
    }

    /// 3 MiB that differ from byte to byte. Made in a plain loop, and compared as `Data` (a
    /// `memcmp`): in a debug build a `map` and an `Array ==` of 3 M elements each took the
    /// test pool's thread for seconds on a busy machine, and every test waiting for a pool
    /// thread with it (a cancelled fetch's completion, which runs on a task).
    static let large = [UInt8](unsafeUninitializedCapacity: 3 << 20) { buffer, count in
        for index in 0..<buffer.count { buffer[index] = UInt8(truncatingIfNeeded: index &* 2_654_435_761 >> 13) }
        count = buffer.count
    }

    /// Whether the file at `path` holds `large`, byte for byte.
    static func holdsLarge(_ path: String) throws -> Bool {
        try Data(contentsOf: URL(fileURLWithPath: path)) == Data(large)
    }

    @Test func aLargeBodyStreamsToACompletionWorkerInOrder() async throws {
        let server = try ScriptedServer()
        server.route("/large.png", .ok(Self.large))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try WatchedSink(path: temp.file("large"))
        defer { sink.file.remove() }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/large.png"), into: sink)
        #expect(try completed.result.get().bodyBytes == Int64(Self.large.count))
        #expect(calls == 1)
        #expect(completed.thread.hasPrefix("cache-worker-"))
        let threads = sink.seen.withLock { $0.threads }
        #expect(threads.count == 1 && threads.allSatisfy { $0.hasPrefix("cache-worker-") },
                "every write on the transfer's one worker, none on the loop: \(threads)")
        try sink.file.close()
        #expect(try Self.holdsLarge(sink.file.path))
    }

    @Test func aSlowSinkPausesTheTransferAndGetsEveryByteInOrder() async throws {
        let server = try ScriptedServer()
        server.route("/large.png", .ok(Self.large))
        server.route("/small.png", .ok(Self.png))
        var configuration = FetchConfiguration()
        configuration.transferLoops = 1
        let client = FetchClient(configuration: configuration)
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try WatchedSink(path: temp.file("large"), writeDelay: 2_000)   // 2 ms a write: far slower than loopback
        defer { sink.file.remove() }
        let large = Task { await Self.start(client, server.url("/large.png"), into: sink) }
        // Meanwhile the loop is free: a small fetch on it completes long before the slow body.
        let smallSink = try FileSink(path: temp.file("small"))
        defer { smallSink.remove() }
        try? await Task.sleep(nanoseconds: 50_000_000)
        let (small, _) = await Self.start(client, server.url("/small.png"), into: smallSink)
        #expect(try small.result.get().status == 200)
        let (completed, calls) = await large.value
        #expect(try completed.result.get().bodyBytes == Int64(Self.large.count))
        #expect(calls == 1)
        #expect(sink.seen.withLock { $0.writes } > 8, "the body came in many chunks")
        try sink.file.close()
        #expect(try Self.holdsLarge(sink.file.path))
    }

    @Test func aLaggingSinkGetsLibcurlsChunksJoinedUpToTheBufferSize() async throws {
        let server = try ScriptedServer()
        server.route("/large.png", .ok(Self.large))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try WatchedSink(path: temp.file("large"), writeDelay: 2_000)   // lags: chunks wait for it
        defer { sink.file.remove() }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/large.png"), into: sink)
        #expect(try completed.result.get().bodyBytes == Int64(Self.large.count))
        #expect(calls == 1)
        let (writes, largest) = sink.seen.withLock { ($0.writes, $0.largest) }
        // libcurl 7.88 hands over 16 KiB at a time: 192 writes for 3 MiB unjoined.
        #expect(writes < Self.large.count / (32 * 1024), "joined while the sink lagged: \(writes) writes")
        #expect(largest <= Defaults.receiveBufferSize, "no buffer past its size (memory per body): \(largest)")
        try sink.file.close()
        #expect(try Self.holdsLarge(sink.file.path))
    }

    @Test func aSinkThatRefusesAStreamedWriteFailsTheFetchWithItsReason() async throws {
        let server = try ScriptedServer()
        server.route("/large.png", .ok(Self.large))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try WatchedSink(path: temp.file("large"), failAtWrite: 3)
        defer { sink.file.remove() }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/large.png"), into: sink)
        guard case .failure(let error) = completed.result else { Issue.record("a refused write succeeded"); return }
        #expect(error.kind == .io)
        #expect(error.detail == "the disk refused it", "\(error)")
        #expect(calls == 1)
        #expect(sink.seen.withLock { $0.writes } == 3, "no write after the refused one")
    }

    @Test func aStreamedBodyPastMaxSizeFailsTooLarge() async throws {
        let server = try ScriptedServer()
        var response = ScriptedResponse.ok(Self.large)
        response.omitContentLength = true   // found out while streaming, not from the header
        response.closeConnection = true
        server.route("/large.png", response)
        var configuration = FetchConfiguration()
        configuration.maxSize = 1 << 20
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try WatchedSink(path: temp.file("large"))
        defer { sink.file.remove() }
        let (completed, calls) = await Self.start(FetchClient(configuration: configuration), server.url("/large.png"), into: sink)
        guard case .failure(let error) = completed.result else { Issue.record("a body past --max-size succeeded"); return }
        #expect(error.kind == .tooLarge)
        #expect(calls == 1)
        #expect(sink.file.bytesWritten <= 1 << 20)
    }

    @Test func cancellingAPausedLargeTransferEndsItAtOnce() async throws {
        let server = try ScriptedServer()
        server.route("/large.png", .ok(Self.large))
        let temp = try TempDirectory(prefix: "asyncfetch-start")
        let sink = try WatchedSink(path: temp.file("large"), writeDelay: 20_000)   // 20 ms a write: paused most of the time
        defer { sink.file.remove() }
        let handle = FetchHandle()
        let probe = PoolLagProbe()   // a busy machine runs the sink's writes late: the bound adds the pool's worst lag
        defer { probe.stop() }
        // Cancelled once the body streams (two writes in), from a thread of its own: a
        // timer on a busy test pool could fire after the whole body was written.
        let canceller = Canceller(handle, whenSeen: { sink.seen.withLock { $0.writes } }) { sink.seen.withLock { $0.writes } >= 2 }
        let (completed, calls) = await Self.start(FetchClient(), server.url("/large.png"), into: sink, handle: handle)
        guard case .failure(let error) = completed.result else { Issue.record("a cancelled fetch succeeded"); return }
        #expect(error.kind == .cancelled)
        #expect(calls == 1)
        let at = canceller.cancelledAt()
        let writesBefore = canceller.seenWhenCancelled   // read after cancelledAt: set before it returns
        let (writes, lastEnd) = sink.seen.withLock { ($0.writes, $0.lastEnd) }
        // Only the buffers already on their way (and the write under way) are written, not the body's ~48.
        #expect(writes - writesBefore <= Defaults.streamBuffers + 1, "\(writes - writesBefore) writes after the cancel")
        // Answered as soon as those writes (20 ms each, longer on a busy machine) are done.
        // SPEC §6: "cancelling the Swift task that awaits a transfer aborts it promptly (well under 100 ms)".
        #expect(completed.at - max(at, lastEnd) < 0.1 + probe.worstLag,
                "answered \(completed.at - at) s after the cancel, \(completed.at - lastEnd) s after the last write (pool lag \(probe.worstLag) s)")
    }
}
