import DiskCache
import Foundation
import Loader
import Testing
import TestSupport

/// The run lifecycle a Swift program shares with the tool (`BatchRun`):
/// leftovers swept first, events, then the end (sync, list read errors).
@Suite(.timeLimit(.minutes(3))) struct BatchRunTests {
    /// A temporary file of a writer that is gone: the sweep's to remove.
    static let leftover = "0123456789abcdef0123456789abcdef.2147483646.1"

    func runAll(_ run: BatchRun) async -> [LoadEvent] {
        var events: [LoadEvent] = []
        for await event in run.events where event.phase.isTerminal { events.append(event) }
        return events
    }

    @Test func aRunSweepsLeftoversLoadsItsListAndSyncsAtTheEnd() async throws {
        let harness = try LoaderHarness()
        harness.server.route("/a.png", .ok(LoaderHarness.png))
        let list = try harness.temp.write("urls.txt", Array("\(harness.server.url("/a.png"))\n# comment\n".utf8))
        let stale = try harness.temp.write("cache/.tmp/\(Self.leftover)", [1, 2, 3])
        let run = BatchRun(store: harness.store, list: URLList(arguments: [], inputs: [try InputLines(path: list)]),
                           options: LoaderHarness.options())
        #expect(!FileManager.default.fileExists(atPath: stale), "swept before the batch")
        let events = await runAll(run)
        #expect(events.map(\.phase.name) == ["success"])
        #expect(run.progress.known == 1 && run.progress.total == 1)
        let ending = await run.finish(interrupted: false, sync: true)
        #expect(ending.syncError == nil && ending.inputError == nil && ending.remoteStats == nil)
        #expect(try harness.entry("/a.png") != nil)
    }

    @Test func anOfflineRunTouchesNoTemporaryFileAndReportsWhatIsNotCached() async throws {
        let harness = try LoaderHarness()
        let stale = try harness.temp.write("cache/.tmp/\(Self.leftover)", [1, 2, 3])
        let url = harness.server.url("/never.png")
        let run = BatchRun(store: harness.store, list: URLList(arguments: [url, url], inputs: []),
                           options: LoaderHarness.options { $0.offline = true })
        let events = await runAll(run)
        #expect(events.map(\.phase.name) == ["empty"], "a duplicate is reported once")
        #expect(run.progress.total == 1)
        _ = await run.finish(interrupted: false, sync: true)
        #expect(FileManager.default.fileExists(atPath: stale), "an offline run never sweeps")
        #expect(harness.server.totalRequests == 0)
    }

    @Test func aListThatFailsMidwayIsNamedAtTheEnd() async throws {
        let harness = try LoaderHarness()
        // `/proc/self/mem` opens, but a read at offset 0 fails (EIO): a list that stops early.
        let input = try InputLines(path: "/proc/self/mem")
        let run = BatchRun(store: harness.store, list: URLList(arguments: [], inputs: [input]),
                           options: LoaderHarness.options { $0.offline = true })
        _ = await runAll(run)
        let ending = await run.finish(interrupted: false, sync: false)
        #expect(ending.inputError?.path == "/proc/self/mem")
        #expect(ending.inputError?.problem == "Input/output error")
    }
}

/// The summary's numbers, counted from phases.
@Suite(.timeLimit(.minutes(3))) struct BatchTotalsTests {
    @Test func terminalPhasesAreCountedBySourceAndBytes() async throws {
        let harness = try LoaderHarness()
        harness.server.route("/a.png", .ok(LoaderHarness.png))
        var totals = BatchTotals()
        let loader = harness.loader()
        for phase in [await loader.load(harness.server.url("/a.png")), await loader.load(harness.server.url("/a.png")),
                      await loader.load(harness.server.url("/missing.png")), .loading(nil)] {
            totals.count(phase)
        }
        let offline = harness.loader { $0.offline = true }
        totals.count(await offline.load(harness.server.url("/never.png")))
        #expect(totals.total == 4 && totals.success == 2 && totals.failure == 1 && totals.empty == 1)
        #expect(totals.network == 1 && totals.cache == 1 && totals.bytes == 2 * Int64(LoaderHarness.png.count))
        #expect(!totals.allSucceeded)
        var good = BatchTotals()
        good.count(await loader.load(harness.server.url("/a.png")))
        #expect(good.allSucceeded)
    }
}
