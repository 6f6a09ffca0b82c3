import ArgumentParser
import Loader

/// Running a batch: URLs in, reports out, exit status (SPEC §3, §6).
extension AsyncFetch {
    func run() async throws {
        try await FetchRun.run(options.settings(urls: urls))
    }
}

/// One run of `asyncfetch URL...`, whichever parser read the command line:
/// the usage checks, the hints and the signals, then what the options name
/// opened in the tool's order and handed to Loader's `ReportedRun`, whose
/// outcome becomes the exit status.
enum FetchRun {
    static func run(_ options: RunSettings) async throws {
        try options.checkUsage()
        try EarlySignals.ignoreSIGPIPE()
        // After SIGPIPE is ignored: a hint to a stderr nobody reads must not kill the run before its URLs.
        for hint in WordHints.hints(for: options.urls) { Console.error("asyncfetch: " + hint) }
        // Before anything that may wait (a cache directory on a slow disk, an --input FIFO
        // nobody writes yet): a signal from here on is the run's, ended by the grace if it waits on.
        let interruption = try Interruption(bodyOnStandardOutput: options.output == "-")
        let store = try CacheOptions.openRunStore(cacheDir: options.cacheDir, offline: options.offline)
        if let problem = options.output.map(Delivery.init(argument:))?.problem(cacheDirectory: store.directory) {
            throw UsageError(problem)
        }
        // Once -o is known to be taken (not refused), and not under -q (only failures are printed).
        if !options.quiet, let log = HabitHints.logFile(output: options.output) {
            Console.error("asyncfetch: -o \(options.output ?? ""): the body goes to that file, as with curl's -o; \(log)")
        }
        let inputs = try UnreadableInputs.open(options.input)
        // The environment is read only for a run that may use a tier (a hit's run reads none of it).
        var settings = options
        settings.remoteCache = options.offline ? nil : RemoteOptions.named(options.remoteCache)
        let environment = settings.remoteCache?.isEmpty == false ? RemoteOptions.environment() : [:]
        let run: ReportedRun
        do {
            // A signal already taken (during start-up) starts the batch cancelled: no transfer at all.
            run = try ReportedRun(settings: settings, store: store, inputs: inputs, environment: environment,
                                  cancelled: { interruption.signal != nil })
        } catch {
            throw UsageError(error)   // the cache directory as -P is a slip; a folder that cannot be used, the machine's
        }
        interruption.onFirstSignal { run.cancel() }
        interruption.onSecondSignal { run.reporter.abandon() }
        switch await run.follow(interrupted: { interruption.signal }) {
        case .succeeded: return
        case .notAllSucceeded: throw ExitCode(1)
        case .interrupted(let signal): throw ExitCode(128 + signal)
        case .resultsUnwritable(let code, let destination): throw OutputFailure.error(errno: code, what: destination)
        case .unreadableLists(let errors): throw UnreadableInputs(errors: errors)
        }
    }
}
