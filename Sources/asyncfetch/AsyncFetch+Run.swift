import ArgumentParser
import DiskCache
import Fetch
import Loader
import RemoteCache
#if canImport(Glibc)
import Glibc
#endif

/// Running a batch: URLs in, reports out, exit status (SPEC §3, §6).
extension AsyncFetch {
    func run() async throws {
        try await FetchRun.run(options.settings(urls: urls))
    }
}

/// One run of `asyncfetch URL...`, whichever parser read the command line:
/// opens what the options name, hands the lifecycle to `BatchRun`, prints.
enum FetchRun {
    static func run(_ options: RunSettings) async throws {
        try options.checkUsage()
        try EarlySignals.ignoreSIGPIPE()
        // After SIGPIPE is ignored: a hint to a stderr nobody reads must not kill the run before its URLs.
        for hint in WordHints.hints(for: options.urls) { Console.error("asyncfetch: " + hint) }
        // Before anything that may wait (a cache directory on a slow disk, an --input FIFO
        // nobody writes yet): a signal from here on is the run's, ended by the grace if it waits on.
        let interruption = try Interruption()
        let store = try CacheOptions.openRunStore(cacheDir: options.cacheDir, offline: options.offline)
        // The loader writes -o itself: that is how a no-store body (never cached) is delivered.
        let output = options.output.map(Delivery.init(argument:))
        if let problem = output?.problem(cacheDirectory: store.directory) { throw UsageError(problem) }
        let inputs = try UnreadableInputs.open(options.input)
        // `URL<TAB>name` lines name their file in --output-dir.
        let names = GivenNames()
        let folder = try options.outputDir.map { try outputDirectory($0, options, names: names, cacheDirectory: store.directory) }
        let remoteLocation = options.offline ? nil : try RemoteOptions.location(options.remoteCache)
        let list = URLList(arguments: options.urls, inputs: inputs, names: folder == nil ? nil : names, shard: options.shard)
        let mode = Reporter.ProgressMode(requested: options.progress, quiet: options.quiet)
        let reporter = Reporter(style: options.json ? .json : .human, quiet: options.quiet, verbose: options.verbose,
                                resultsToStderr: options.output == "-", progress: mode)
        if options.insecure { reporter.warn("--insecure: TLS certificates are not verified") }
        if mode != .off { inputs.forEach { $0.countAhead() } }

        var loaderOptions = options.loaderOptions()
        // Counted on the loop thread as bytes arrive (atomics); the bar samples it when it redraws.
        let transfers = mode == .off ? nil : TransferProgress()
        loaderOptions.fetch.progress = transfers
        loaderOptions.remote = remoteLocation.map {
            // Each upload takes a --jobs slot of the batch (`HostDispatch`), so no more of them than --jobs either.
            RemoteCache.warning(at: $0, fetch: loaderOptions.fetch, verbose: options.verbose,
                                uploads: min(RemoteDefaults.uploads, options.jobs)) { reporter.warn($0) }
        }
        let delivery = folder.map { Delivery.receiver($0) } ?? output
        // The reporter says which events it prints (no `loading` without --json) and how soon.
        // A signal already taken (during start-up) starts the batch cancelled: no transfer at all.
        let run = BatchRun(store: store, list: list, options: loaderOptions, deliverTo: delivery,
                           hostNotes: { reporter.hostNote($0) }, demand: reporter.demand, cancelled: interruption.signal != nil)
        interruption.onFirstSignal { run.cancel() }
        interruption.onSecondSignal { reporter.abandon() }
        let followed = await reporter.follow(run, transfers: transfers, interrupted: { interruption.signal != nil },
                                             sync: options.sync)
        let results = options.output == "-" ? "the results to standard error" : "standard output"
        if followed.stopped { throw OutputFailure.error(errno: reporter.outputError, what: results) }
        let signal = interruption.signal
        reporter.finish(interruptedBy: signal)
        if let signal { throw ExitCode(128 + signal) }
        // The last lines (cache hits, the summary) are written by `finish`.
        if reporter.outputBroken { throw OutputFailure.error(errno: reporter.outputError, what: results) }
        // A list that failed part way is as unreadable as one that cannot be opened (exit 2), the
        // lines read before the error each reported all the same.
        let unread = followed.ending.inputErrors
        if !unread.isEmpty { throw UnreadableInputs(errors: unread.map { LoadError.unreadableList($0.path, $0.problem) }) }
        if !reporter.summary.allSucceeded { throw ExitCode(1) }
    }

    /// `--output-dir DIR` opened, its problems worded for the command line.
    private static func outputDirectory(_ path: String, _ options: RunSettings, names: GivenNames,
                                        cacheDirectory: String) throws -> OutputDirectory {
        do {
            return try OutputDirectory(path: path, name: OutputName(template: options.name ?? OutputName.defaultTemplate),
                                       hardLink: options.link, givenNames: names, cacheDirectory: cacheDirectory)
        } catch {
            throw UsageError(error)   // the cache directory is a slip; a folder that cannot be used, the machine's
        }
    }
}
