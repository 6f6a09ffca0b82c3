import ArgumentParser
import DiskCache
import Fetch
import Loader
#if canImport(Glibc)
import Glibc
#endif

/// Running a batch: URLs in, reports out, exit status (SPEC §3, §6).
extension AsyncFetch {
    func run() async throws {
        try await FetchRun.run(options.settings(urls: urls))
    }
}

/// One run of `asyncfetch URL...`, whichever parser read the command line.
enum FetchRun {
    static func run(_ options: RunSettings) async throws {
        try options.checkUsage()
        // A closed stdout shows up as EPIPE (and stops the run, exit 141)
        // instead of killing the process with temporary files left behind.
        signal(SIGPIPE, SIG_IGN)
        let store = try CacheOptions.openStore(cacheDir: options.cacheDir)
        if !options.offline { store.sweepTemporaryFiles() }
        let inputs = try options.input.map { try InputLines(path: $0) }
        // `URL<TAB>name` lines name their file in --output-dir.
        let names = GivenNames()
        let folder = try options.outputDir.map {
            try OutputDirectory(path: $0, name: OutputName(template: options.name ?? OutputName.defaultTemplate),
                                hardLink: options.link, givenNames: names, cacheDirectory: store.directory)
        }
        let interruption = try Interruption()
        let remoteLocation = options.offline ? nil : try RemoteOptions.location(options.remoteCache)
        let list = URLList(arguments: options.urls, inputs: inputs, names: folder == nil ? nil : names, shard: options.shard)
        let mode = progressMode(options.progress)
        let reporter = Reporter(style: options.json ? .json : .human, quiet: options.quiet, verbose: options.verbose,
                                resultsToStderr: options.output == "-", progress: mode)
        if options.insecure { reporter.warn("--insecure: TLS certificates are not verified") }
        if mode != .off { inputs.forEach { $0.countAhead() } }

        var loaderOptions = options.loaderOptions()
        // Counted on the loop thread as bytes arrive (atomics); the bar samples it when it redraws.
        let transfers = mode == .off ? nil : TransferProgress()
        let remote = remoteLocation.map { RemoteOptions.open($0, fetch: loaderOptions.fetch, verbose: options.verbose) { reporter.warn($0) } }
        loaderOptions.fetch.progress = transfers
        loaderOptions.remote = remote
        let loader = ImageLoader(cache: store, options: loaderOptions)
        // The loader writes -o itself: that is how a no-store body (never cached) is delivered.
        let delivery = folder.map { Delivery.receiver($0) } ?? options.output.map(Delivery.init(argument:))
        let batch = loader.batch(list, deliverTo: delivery, hostNotes: { reporter.hostNote($0) })
        reporter.attachProgress(transfers, hosts: { batch.hostActivity }) {
            let counts = batch.counts
            return (counts.distinct, list.progress.total.map { $0 - counts.duplicates })
        }
        interruption.onFirstSignal { batch.cancel() }
        interruption.onSecondSignal { reporter.abandon() }
        let ticker = mode == .off ? nil : Task {
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: UInt64(Defaults.progressRedrawInterval * 1e9))
                reporter.tick()
            }
        }

        var stopped = false
        for await event in batch {
            reporter.report(event)
            if !stopped && reporter.outputBroken {
                stopped = true
                batch.stop()
            }
        }
        if let remote {
            // Uploads finish before the process exits (they run beside the batch, never in a --jobs slot).
            if interruption.signal == nil { await remote.drain() }
            reporter.setRemoteStats(remote.stats)
        }
        ticker?.cancel()
        reporter.setHostCounts(batch.hostCounts)
        if options.sync && !options.offline {
            // One flush of the cache's file system for the whole run (SPEC §4: no fsync per entry).
            do { try store.sync() } catch { reporter.warn("--sync: \(error.message)") }
        }
        let results = options.output == "-" ? "the results to standard error" : "standard output"
        if stopped {
            await batch.finished()
            throw OutputFailure.error(errno: reporter.outputError, what: results)
        }
        let signal = interruption.signal
        reporter.finish(interruptedBy: signal)
        if let signal { throw ExitCode(128 + signal) }
        // The last lines (cache hits, the summary) are written by `finish`.
        if reporter.outputBroken { throw OutputFailure.error(errno: reporter.outputError, what: results) }
        for input in inputs {
            if let problem = input.readError { throw RuntimeFailure("reading --input \(input.name): \(problem)") }
        }
        let code = reporter.summary.exitCode
        if code != 0 { throw ExitCode(code) }
    }

    /// `--progress` / `--no-progress`, else a bar only on a terminal (not `dumb`).
    private static func progressMode(_ progress: Bool?) -> Reporter.ProgressMode {
        switch progress {
        case true?: return .on
        case false?: return .off
        case nil: return Terminal.isTerminal(2) && !Terminal.isDumb ? .auto : .off
        }
    }
}
