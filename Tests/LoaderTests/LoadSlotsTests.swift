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
    /// behind all of them: hosts are served in turn.
    @Test func aBusyHostDoesNotStarveAnother() async throws {
        let h = try LoaderHarness()
        let other = try ScriptedServer()
        h.server.route("/slow", handler: { _ in ScriptedResponse.ok(LoaderHarness.png).delayed(Self.delay) })
        other.route("/one.png", .ok(LoaderHarness.png))
        let loader = h.loader { $0.jobs = 2; $0.jobsPerHost = 2 }
        let busy = Task {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<20 { group.addTask { _ = await loader.load(h.server.url("/slow?\(index)")) } }
            }
        }
        #expect(await h.server.requestsArrive("/slow", count: 2))
        let start = monotonicSeconds()
        let phase = await loader.load(other.url("/one.png"))
        let waited = monotonicSeconds() - start
        await busy.value
        #expect(phase.name == "success", "\(String(describing: phase.error))")
        // Served at the first slot that frees (about one delay), not after the
        // busy host's 20 loads (10 delays).
        #expect(waited < 4 * Self.delay, "the other host's load waited \(waited) s")
    }

    /// A load waiting for a slot that is cancelled ends at once, `cancelled`,
    /// and never reaches the server.
    @Test func aCancelledWaitEndsAtOnce() async throws {
        let h = try LoaderHarness()
        h.server.route("/slow.png", .ok(LoaderHarness.png).delayed(1))
        h.server.route("/queued.png", .ok(LoaderHarness.png))
        let loader = h.loader { $0.jobs = 1 }
        let running = Task { await loader.load(h.server.url("/slow.png")) }
        #expect(await h.server.requestsArrive("/slow.png"))
        let queued = Task { await loader.load(h.server.url("/queued.png")) }
        try await Task.sleep(nanoseconds: 50_000_000)
        let start = monotonicSeconds()
        queued.cancel()
        let phase = await queued.value
        let took = monotonicSeconds() - start
        #expect(phase.error?.kind == .cancelled, "\(phase.name)")
        #expect(took < 0.1, "cancelled after \(took) s")
        #expect(await running.value.name == "success")
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
