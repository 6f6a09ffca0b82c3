import DiskCache
import Fetch
import Foundation
import RemoteCache
import Support
import Testing
import TestSupport

@testable import Loader

/// `LoaderOptions.jobs` bounds the loads an app starts with `load` and
/// `phases(for:)` from many tasks, as `--jobs` bounds the tool's transfers
/// and as the download limits of Nuke, SDWebImage and Kingfisher do; a host
/// that is full holds no slot, and a cancelled wait ends at once.
@Suite(.timeLimit(.minutes(3))) struct LoadSlotsTests {
    static let delay = 0.1

    /// 20 `load` calls side by side with `jobs = 2` ran 6 at once (the
    /// per-host cap: `jobs` bounded batches only); now 2, and all succeed.
    @Test func jobsBoundsLoadsSideBySide() async throws {
        let h = try LoaderHarness()
        h.server.route("/slow", handler: { _ in ScriptedResponse.ok(LoaderHarness.png).delayed(Self.delay) })
        let loader = h.loader { $0.jobs = 2 }
        let phases = await withTaskGroup(of: Phase.self) { group in
            for index in 0..<20 { group.addTask { await loader.load(h.server.url("/slow?\(index)")) } }
            return await group.reduce(into: [Phase]()) { $0.append($1) }
        }
        #expect(phases.count == 20 && phases.allSatisfy { $0.name == "success" }, "\(phases.compactMap(\.error))")
        #expect(h.server.maxConcurrentRequests <= 2, "requests at once: \(h.server.maxConcurrentRequests)")
        #expect(h.server.maxConcurrentRequests == 2)
    }

    /// The remote tier's uploads after `load` take a slot too (SPEC §6:
    /// `jobs` bounds transfers in all, as `--jobs` does for the tool's): the
    /// origin's and the tier's requests together, as one server sees them,
    /// are never more than `jobs` at once. Before, the uploads held none and
    /// ran beside the loads (2 at once with `jobs` 1, 3 with 2).
    @Test(arguments: [1, 2]) func tierUploadsTakeSlots(jobs: Int) async throws {
        /// Requests being answered, counted inside the handlers while they wait (the server's own count
        /// also holds the moment a finished answer is sent, when the next request may already be in).
        final class InFlight: @unchecked Sendable {
            let lock = NSLock()
            var now = 0, most = 0
            func during<T>(seconds: Double, _ answer: () -> T) -> T {
                lock.withLock { now += 1; most = max(most, now) }
                usleep(UInt32(seconds * 1e6))
                lock.withLock { now -= 1 }
                return answer()
            }
        }
        let seen = InFlight()
        let h = try LoaderHarness()
        var urls: [String] = []
        for index in 0..<6 {
            let url = h.server.url("/img/\(index).png")
            urls.append(url)
            h.server.route("/img/\(index).png", handler: { _ in
                seen.during(seconds: Self.delay) { ScriptedResponse.ok(LoaderHarness.png, headers: [("Cache-Control", "max-age=600")]) }
            })
            h.server.route("/cache/" + (try CacheKey(url: url).hex), handler: { request in
                // Nothing in the tier yet (a quick 404); each upload takes its time.
                request.method == "PUT" ? seen.during(seconds: 0.3) { ScriptedResponse.status(201) }
                                        : seen.during(seconds: 0.01) { ScriptedResponse.status(404) }
            })
        }
        let tier = RemoteCache(location: try RemoteLocation.parse(h.server.url("/cache/"), environment: [:]),
                               fetch: FetchConfiguration())
        let loader = h.loader { $0.jobs = jobs; $0.remote = tier }
        let phases = await withTaskGroup(of: Phase.self) { group in
            for url in urls { group.addTask { await loader.load(url) } }
            return await group.reduce(into: [Phase]()) { $0.append($1) }
        }
        await tier.drain()
        #expect(phases.allSatisfy { $0.name == "success" }, "\(phases.compactMap(\.error))")
        #expect(tier.stats.uploads == urls.count, "\(tier.stats)")
        let most = seen.lock.withLock { seen.most }
        #expect(most <= jobs, "requests at once, origin and tier: \(most)")
    }

    /// A host with many loads waiting does not keep another host's load
    /// behind all of them: hosts are served in turn. Checked by order, not
    /// time: the busy host's answers are held, the other host's load joins
    /// the queue, then the held answers are let go one at a time, each after
    /// the slot it frees has been taken. The other host's request comes at
    /// the second slot that frees (the busy host's turn came first), not
    /// after the busy host's 18 waiting loads.
    @Test func aBusyHostDoesNotStarveAnother() async throws {
        let h = try LoaderHarness()
        let other = try ScriptedServer()
        let arrivals = Locked<[String]>([])
        let held = DispatchSemaphore(value: 0)
        h.server.route("/slow", handler: { _ in
            arrivals.withLock { $0.append("busy") }
            _ = held.wait(timeout: .now() + 60)   // a bound for a test that failed; a pass lets every answer go
            return ScriptedResponse.ok(LoaderHarness.png)
        })
        other.route("/one.png", handler: { _ in
            arrivals.withLock { $0.append("other") }
            return ScriptedResponse.ok(LoaderHarness.png)
        })
        let loader = h.loader { $0.jobs = 2; $0.jobsPerHost = 2 }
        let busy = Task {
            await withTaskGroup(of: Phase.self) { group in
                for index in 0..<20 { group.addTask { await loader.load(h.server.url("/slow?\(index)")) } }
                return await group.reduce(into: [Phase]()) { $0.append($1) }
            }
        }
        defer { for _ in 0..<20 { held.signal() } }
        #expect(await Self.until { h.server.requestCount("/slow") == 2 && loader.slots.waiting == 18 })
        let otherLoad = Task { await loader.load(other.url("/one.png")) }
        #expect(await Self.until { loader.slots.waiting == 19 }, "the other host's load never queued")
        while !arrivals.withLock({ $0.contains("other") }) {
            let seen = arrivals.withLock { $0.count }
            held.signal()
            guard await Self.until({ arrivals.withLock { $0.count } > seen }) else { break }
        }
        let order = arrivals.withLock { $0 }
        let busyFirst = order.prefix { $0 == "busy" }.count
        #expect(order.contains("other") && busyFirst <= 3, "the other host's request came after \(busyFirst) of the busy host's: \(order)")
        for _ in 0..<20 { held.signal() }
        let phase = await otherLoad.value
        #expect(phase.name == "success", "\(String(describing: phase.error))")
        #expect(await busy.value.allSatisfy { $0.name == "success" })
    }

    /// Polls `condition` every 5 ms until it holds, for 30 s at most (a bound
    /// for a hang, not a measure: a load machine's pace only makes it poll longer).
    static func until(_ condition: () -> Bool) async -> Bool {
        let deadline = monotonicSeconds() + 30
        while !condition() {
            if monotonicSeconds() > deadline { return false }
            try? await Task.sleep(nanoseconds: 5_000_000)
        }
        return true
    }

    /// A load waiting for a slot that is cancelled ends at once, `cancelled`,
    /// and never reaches the server. "At once": before the load holding the
    /// slot ends (its answer is held until the cancelled one has ended, 30 s
    /// at most), not when the slot comes free.
    @Test func aCancelledWaitEndsAtOnce() async throws {
        let h = try LoaderHarness()
        let held = DispatchSemaphore(value: 0)
        h.server.route("/slow.png", handler: { _ in
            _ = held.wait(timeout: .now() + 60)
            return ScriptedResponse.ok(LoaderHarness.png)
        })
        h.server.route("/queued.png", .ok(LoaderHarness.png))
        let loader = h.loader { $0.jobs = 1 }
        let ended = Locked<[String]>([])
        func load(_ path: String) -> Task<Phase, Never> {
            Task {
                let phase = await loader.load(h.server.url(path))
                ended.withLock { $0.append(path) }
                return phase
            }
        }
        let running = load("/slow.png")
        defer { held.signal() }
        #expect(await h.server.requestsArrive("/slow.png", timeout: 30))
        let queued = load("/queued.png")
        #expect(await Self.until { loader.slots.waiting == 1 }, "the second load never queued")
        queued.cancel()
        _ = await Self.until { !ended.withLock { $0.isEmpty } }
        held.signal()
        let phase = await queued.value
        #expect(await running.value.name == "success")
        #expect(ended.withLock { $0 } == ["/queued.png", "/slow.png"], "the cancelled wait lasted until the slot came free")
        #expect(phase.error?.kind == .cancelled, "\(phase.name)")
        #expect(h.server.requestCount("/queued.png") == 0)
        #expect(h.temporaryFiles.isEmpty)
    }

    // MARK: The rules alone

    static let a = HostKey(origin: "http://a", name: "a"), b = HostKey(origin: "http://b", name: "b")

    static func granted(_ action: LoadSlotsState<Int>.Action) -> [Int] {
        guard case .resume(let list) = action else { return [] }
        return list.filter(\.1).map(\.0)
    }

    @Test func slotsGoToHostsInTurn() {
        var state = LoadSlotsState<Int>(jobs: 2, jobsPerHost: 2)
        var ids: [Int: UInt64] = [:]
        for waiter in 1...4 {
            ids[waiter] = state.ticket()
            let action = state.wait(ids[waiter]!, host: Self.a, waiter)
            #expect(Self.granted(action) == (waiter <= 2 ? [waiter] : []))
        }
        ids[5] = state.ticket()
        #expect(Self.granted(state.wait(ids[5]!, host: Self.b, 5)).isEmpty)   // jobs full: waits
        #expect(Self.granted(state.release(ids[1]!, host: Self.a)) == [3])    // a's turn first
        #expect(Self.granted(state.release(ids[2]!, host: Self.a)) == [5])    // then b's
        #expect(Self.granted(state.release(ids[3]!, host: Self.a)) == [4])
        #expect(state.inUse == 2)
    }

    @Test func aFullHostHoldsNoSlot() {
        var state = LoadSlotsState<Int>(jobs: 3, jobsPerHost: 1)
        let first = state.ticket(), second = state.ticket(), third = state.ticket()
        #expect(Self.granted(state.wait(first, host: Self.a, 1)) == [1])
        #expect(Self.granted(state.wait(second, host: Self.a, 2)).isEmpty)
        #expect(Self.granted(state.wait(third, host: Self.b, 3)) == [3])
        #expect(state.inUse == 2)
    }

    @Test func leavingBeforeOrWhileWaitingIsRefusedOnce() {
        var state = LoadSlotsState<Int>(jobs: 1, jobsPerHost: 1)
        let holder = state.ticket(), early = state.ticket(), late = state.ticket()
        #expect(Self.granted(state.wait(holder, host: Self.a, 1)) == [1])
        guard case .nothing = state.leave(early) else { Issue.record("early leave answered"); return }
        guard case .resume(let refused) = state.wait(early, host: Self.a, 2), refused.map(\.1) == [false] else {
            Issue.record("early leaver not refused"); return
        }
        #expect(Self.granted(state.wait(late, host: Self.a, 3)).isEmpty)
        guard case .resume(let left) = state.leave(late), left.map(\.0) == [3], left.map(\.1) == [false] else {
            Issue.record("waiter not refused"); return
        }
        guard case .nothing = state.release(holder, host: Self.a) else { Issue.record("a slot went to a leaver"); return }
        #expect(state.inUse == 0)
    }
}
