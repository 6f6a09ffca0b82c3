import DiskCache
import Fetch
import RemoteCache

/// One run of `asyncfetch URL...` as the tool runs it, for a Swift program
/// that wants what the tool prints: the `BatchRun` of a `RunSettings`, the
/// `Reporter` that follows it, and how the run ended (`Outcome`), judged in
/// the tool's order. The caller opens the store and the `--input` lists
/// (`URLList.open`) and checks `-o` against the store (`Delivery.problem`)
/// first, as the tool does, since an `--input` FIFO may wait for a writer.
/// What stays with the caller is process plumbing: signals (`cancel`,
/// `reporter.abandon()`), the environment, and the exit status.
public final class ReportedRun: Sendable {
    /// How a followed run ended, the first that applies.
    public enum Outcome: Sendable {
        /// Every URL ended in `success`.
        case succeeded
        /// At least one URL ended in `failure` or `empty`.
        case notAllSucceeded
        /// A signal stopped the run: every URL was reported, then the summary.
        case interrupted(signal: Int32)
        /// The results could not be written (`errno` of the write that
        /// failed; `destination`: "standard output", or "the results to
        /// standard error" with `-o -`). When the reader went away (`EPIPE`)
        /// the run was stopped; no summary is written.
        case resultsUnwritable(errno: Int32, destination: String)
        /// `--input` lists that failed part way (`LoadError.unreadableList`);
        /// the URLs read before the error were each reported all the same.
        case unreadableLists([LoadError])
    }

    public let batch: BatchRun
    public let reporter: Reporter
    private let transfers: TransferProgress?
    private let sync: Bool
    private let destination: String

    /// Opens `--output-dir` and the `--remote-cache` tier the settings name
    /// (`settings.remoteCache`, its `AWS_*` values from `environment`; none
    /// `--offline`), writes the `--insecure` warning and starts the batch;
    /// `cancelled` is read just before (a signal taken while the caller
    /// opened things: the batch starts cancelled, no transfer at all).
    /// Throws what stops the run before it starts: an `--output-dir` that
    /// cannot be used (`OutputDirectory`), a tier location that does not
    /// parse (`usage`).
    public init(settings: RunSettings, store: DiskCacheStore, inputs: [InputLines],
                environment: [String: String] = [:], cancelled: () -> Bool = { false }) throws(LoadError) {
        // `URL<TAB>name` lines name their file in --output-dir.
        let names = GivenNames()
        var folder: OutputDirectory?
        if let path = settings.outputDir {
            folder = try OutputDirectory(path: path, name: OutputName(template: settings.name ?? OutputName.defaultTemplate),
                                         hardLink: settings.link, givenNames: names, cacheDirectory: store.directory)
        }
        var location: RemoteLocation?
        if !settings.offline, let named = settings.remoteCache, !named.isEmpty {
            do {
                location = try RemoteLocation.parse(named, environment: environment)
            } catch {
                throw LoadError(kind: .usage, message: error.message)
            }
        }
        let list = URLList(arguments: settings.urls, inputs: inputs, names: folder == nil ? nil : names, shard: settings.shard)
        let mode = Reporter.ProgressMode(requested: settings.progress, quiet: settings.quiet)
        let reporter = Reporter(style: settings.json ? .json : .human, quiet: settings.quiet, verbose: settings.verbose,
                                resultsToStderr: settings.output == "-", progress: mode)
        if settings.insecure { reporter.warn("--insecure: TLS certificates are not verified") }
        if mode != .off { inputs.forEach { $0.countAhead() } }

        var options = settings.loaderOptions()
        // Counted on the loop thread as bytes arrive (atomics); the bar samples it when it redraws.
        let transfers = mode == .off ? nil : TransferProgress()
        options.fetch.progress = transfers
        let fetch = options.fetch
        options.remote = location.map {
            // Each upload takes a --jobs slot of the batch (`HostDispatch`), so no more of them than --jobs either.
            RemoteCache.warning(at: $0, fetch: fetch, verbose: settings.verbose,
                                uploads: min(RemoteDefaults.uploads, settings.jobs)) { reporter.warn($0) }
        }
        // The loader writes -o itself: that is how a no-store body (never cached) is delivered.
        let delivery = folder.map { Delivery.receiver($0) } ?? settings.output.map(Delivery.init(argument:))
        // The reporter says which events it prints (no `loading` without --json) and how soon.
        batch = BatchRun(store: store, list: list, options: options, deliverTo: delivery,
                         hostNotes: { reporter.hostNote($0) }, demand: reporter.demand, cancelled: cancelled())
        self.reporter = reporter
        self.transfers = transfers
        sync = settings.sync
        destination = settings.output == "-" ? "the results to standard error" : "standard output"
    }

    /// No new transfers, those in flight aborted, every URL still reported
    /// (`BatchRun.cancel`): what a first SIGINT or SIGTERM does.
    public func cancel() { batch.cancel() }

    /// Reports the run to its end (`Reporter.follow`), writes the summary
    /// and says how it ended. `interrupted` is the signal that stopped the
    /// run, if one did; it is read as the run finishes.
    public func follow(interrupted: () -> Int32?) async -> Outcome {
        let followed = await reporter.follow(batch, transfers: transfers, interrupted: { interrupted() != nil }, sync: sync)
        if followed.stopped { return .resultsUnwritable(errno: reporter.outputError, destination: destination) }
        let signal = interrupted()
        // The last lines (cache hits, the summary) are written by `finish`.
        reporter.finish(interruptedBy: signal)
        if let signal { return .interrupted(signal: signal) }
        if reporter.outputBroken { return .resultsUnwritable(errno: reporter.outputError, destination: destination) }
        // A list that failed part way is as unreadable as one that cannot be opened.
        let unread = followed.ending.inputErrors
        if !unread.isEmpty { return .unreadableLists(unread.map { LoadError.unreadableList($0.path, $0.problem) }) }
        return reporter.summary.allSucceeded ? .succeeded : .notAllSucceeded
    }
}
