import DiskCache
import Foundation
import Loader
import Testing
import TestSupport

/// A run of `RunSettings` as the tool runs it (`ReportedRun`): what stops it
/// before it starts, and how it ended, judged in the tool's order. The
/// end-to-end tests check the exit codes the tool maps these to.
@Suite(.timeLimit(.minutes(3))) struct ReportedRunTests {
    /// Settings as the tool's would be for `urls`, quiet (a success prints
    /// nothing), no bar, no retries and short timeouts.
    static func settings(_ urls: [String], _ configure: (inout RunSettings) -> Void = { _ in }) -> RunSettings {
        var settings = RunSettings()
        settings.urls = urls
        settings.quiet = true
        settings.progress = false
        settings.retries = 0
        settings.connectTimeout = 2
        settings.timeout = 5
        configure(&settings)
        return settings
    }

    @Test func aRunSucceedsWhenEveryURLDoesAndNotOtherwise() async throws {
        let harness = try LoaderHarness()
        harness.server.route("/a.png", .ok(LoaderHarness.png))
        let url = harness.server.url("/a.png")
        // -P with a `URL<TAB>name` line: the body is put under the given name.
        let list = try harness.temp.write("urls.txt", Array("\(url)\tcat.png\n".utf8))
        let folder = harness.temp.file("photos")
        let run = try ReportedRun(settings: Self.settings([]) { $0.outputDir = folder }, store: harness.store,
                                  inputs: [try InputLines(path: list)])
        guard case .succeeded = await run.follow(interrupted: { nil }) else {
            Issue.record("every URL succeeded")
            return
        }
        #expect(FileManager.default.contents(atPath: folder + "/cat.png").map { Array($0) } == LoaderHarness.png)
        #expect(run.reporter.summary.success == 1)

        let offline = try ReportedRun(settings: Self.settings([url, harness.server.url("/never.png")]) { $0.offline = true },
                                      store: harness.store, inputs: [])
        guard case .notAllSucceeded = await offline.follow(interrupted: { nil }) else {
            Issue.record("an --offline miss is empty, which is no success")
            return
        }
        #expect(offline.reporter.summary.success == 1 && offline.reporter.summary.empty == 1)
        #expect(harness.server.totalRequests == 1, "only the first run used the network")
    }

    /// A signal taken while the caller opened things: the batch starts
    /// cancelled (no transfer at all), every URL is still reported, and the
    /// outcome names the signal.
    @Test func aSignalBeforeTheStartMeansNoTransferAndTheSignalIsTheOutcome() async throws {
        let harness = try LoaderHarness()
        harness.server.route("/a.png", .ok(LoaderHarness.png))
        let run = try ReportedRun(settings: Self.settings([harness.server.url("/a.png")]), store: harness.store,
                                  inputs: [], cancelled: { true })
        guard case .interrupted(let signal) = await run.follow(interrupted: { SIGTERM }) else {
            Issue.record("interrupted")
            return
        }
        #expect(signal == SIGTERM)
        #expect(run.reporter.summary.total == 1 && run.reporter.summary.empty == 1, "reported, not started")
        #expect(harness.server.totalRequests == 0)
    }

    /// An --output-dir that is the cache directory and a tier location that
    /// does not parse stop the run before it starts, as slips (`usage`); an
    /// --offline run uses no tier, so its location is not read.
    @Test func whatStopsARunBeforeItStartsIsThrown() async throws {
        let harness = try LoaderHarness()
        let url = harness.server.url("/a.png")
        #expect(throws: LoadError.self) {
            try ReportedRun(settings: Self.settings([url]) { $0.outputDir = harness.store.directory }, store: harness.store, inputs: [])
        }
        do {
            _ = try ReportedRun(settings: Self.settings([url]) { $0.remoteCache = "ftp://tier.example/prefix/" },
                                store: harness.store, inputs: [])
            Issue.record("an ftp:// tier is refused")
        } catch {
            #expect(error.kind == .usage && error.message.contains("ftp://"), "\(error.message)")
        }
        let offline = try ReportedRun(settings: Self.settings([url]) { $0.offline = true; $0.remoteCache = "ftp://tier.example/prefix/" },
                                      store: harness.store, inputs: [])
        guard case .notAllSucceeded = await offline.follow(interrupted: { nil }) else {
            Issue.record("an --offline miss")
            return
        }
        #expect(harness.server.totalRequests == 0)
    }

    /// A list that fails part way is the outcome (the tool's exit 2), after
    /// every URL it gave was reported.
    @Test func aListThatFailsPartWayIsTheOutcome() async throws {
        let harness = try LoaderHarness()
        // `/proc/self/mem` opens, but a read at offset 0 fails (EIO): a list that stops early.
        let run = try ReportedRun(settings: Self.settings([]) { $0.offline = true }, store: harness.store,
                                  inputs: [try InputLines(path: "/proc/self/mem")])
        guard case .unreadableLists(let errors) = await run.follow(interrupted: { nil }) else {
            Issue.record("the list's error is the outcome")
            return
        }
        #expect(errors.map(\.message) == ["cannot read --input /proc/self/mem: Input/output error"])
        #expect(errors.first?.kind == .io && errors.first?.path == "/proc/self/mem")
    }
}
