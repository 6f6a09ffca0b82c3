import DiskCache
import Foundation
import Glibc
import Loader
import Support
import Testing
import TestSupport

/// A batch's descriptors are closed once its loads are done: the cache's new
/// entries (unnamed or named temporary files), a `no-store` body's transient
/// file, bodies cut short or refused, and the engine's under them, whether
/// each load ended or was cancelled by the batch's cancel at a random point.
/// Then the loaders go: the process has the descriptors it had before
/// (`/proc/self/fd`), and the cache's temporary directory is empty.
@Suite(.timeLimit(.minutes(3))) struct LoaderDescriptorTests {
    final class Weak: @unchecked Sendable {
        weak var object: ImageLoader?
        init(_ object: ImageLoader) { self.object = object }
    }

    /// One loader's batch of `count` URLs of every kind, cancelled after a
    /// random number of its events (nil: never); every URL reported once.
    static func round(_ number: Int, count: Int, cancelAfter: Int?, harness: LoaderHarness) async throws {
        let kinds = ["png", "large", "cut", "missing", "nostore", "slow", "text"]
        var urls: [String] = []
        for index in 0..<count {
            urls.append(harness.server.url("/\(kinds[index % kinds.count])?\(number)-\(index)"))
        }
        // The loader, its batch and the batch's work are let go when this returns.
        func run() async -> (Weak, [String: Int]) {
            let loader = harness.loader { options in
                options.fetch.retries = 0
                options.jobs = 12
            }
            let batch = loader.batch(urls)
            var seen: [String: Int] = [:]
            for await event in batch where event.phase.isTerminal {
                seen[event.url, default: 0] += 1
                if let cancelAfter, seen.count == cancelAfter { batch.cancel() }
            }
            await batch.finished()
            return (Weak(loader), seen)
        }
        let (gone, seen) = await run()
        #expect(seen.count == count && seen.values.allSatisfy { $0 == 1 }, "round \(number): \(seen.count) of \(count) reported")
        // Its client goes with its last holder (a task winding down may hold it a moment); that joins the loops.
        let released = await LoadSlotsTests.until { gone.object == nil }   // 30 s: a bound for a hang
        #expect(released, "round \(number): the loader was not let go")
    }

    @Test func cancelledAndFailedLoadsLeaveNoDescriptorOpen() async throws {
        let harness = try LoaderHarness()
        defer { harness.server.stop() }
        let png = LoaderHarness.png
        let large = ImageFixture.jpegWithLargeMetadata(segments: 3)   // more than is held in memory: streamed
        let fresh = [("Cache-Control", "max-age=0")]
        harness.server.route("/png", .ok(png, headers: fresh))
        harness.server.route("/large", .ok(large, contentType: "image/jpeg", headers: fresh))
        var cut = ScriptedResponse.ok(large, contentType: "image/jpeg")
        cut.closeAfterBodyBytes = large.count / 2
        harness.server.route("/cut", cut)
        harness.server.route("/nostore", .ok(png, headers: [("Cache-Control", "no-store")]))
        var slow = ScriptedResponse.ok(png)
        slow.trickle = (chunk: 64, interval: 0.02)
        harness.server.route("/slow", slow)
        harness.server.route("/text", .ok(Array("not an image".utf8), contentType: "text/plain"))
        harness.server.route("/missing", .status(404))
        try await Self.round(0, count: 7, cancelAfter: nil, harness: harness)   // what a first load opens once is open now
        let before = openDescriptors()
        for number in 1...4 {
            try await Self.round(number, count: 84, cancelAfter: number == 4 ? nil : Int.random(in: 1..<60), harness: harness)
        }
        // The server's side of each connection closes when its thread reads the client's close:
        // stopped (its threads joined), it holds none; its listener only goes.
        harness.server.stop()
        let after = openDescriptors()
        // What the loads open: sockets, epoll sets, eventfds, files in the cache or spooled beside it
        // (`SpoolFile`). Another suite's thread winding down may open or close something else meanwhile.
        let spooled = "/asyncfetch-\(getpid())-"
        let added = after.filter { fd, target in
            before[fd] != target && (target.hasPrefix("socket:") || target.hasPrefix("anon_inode:")
                                     || target.hasPrefix(harness.temp.path) || target.contains(spooled))
        }.sorted { $0.key < $1.key }
        #expect(added.isEmpty, "\(added.count) descriptors left open: \(added.prefix(12).map { "\($0.key) \($0.value)" })")
        #expect(harness.temporaryFiles.isEmpty, "\(harness.temporaryFiles)")
    }
}
