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
        try options.checkUsage(urls: urls)
        // A closed stdout shows up as EPIPE (and stops the run, exit 141)
        // instead of killing the process with temporary files left behind.
        signal(SIGPIPE, SIG_IGN)
        let options = self.options
        let store = try options.cache.openStore()
        let inputLines = try options.input.map { try InputLines(path: $0) }
        let interruption = try Interruption()
        let list = URLList(arguments: urls, input: inputLines)
        let mode = progressMode()
        let reporter = Reporter(style: options.json ? .json : .human, quiet: options.quiet, verbose: options.verbose,
                                resultsToStderr: options.output == "-", progress: mode)
        if options.insecure { reporter.warn("--insecure: TLS certificates are not verified") }
        if mode != .off { inputLines?.countAhead() }

        let loader = ImageLoader(cache: store, options: options.loaderOptions())
        let batch = loader.batch(list)
        reporter.attachProgress {
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

        var delivered: String?
        var stopped = false
        for await event in batch {
            reporter.report(event)
            if case .success(let result) = event.phase { delivered = result.path }
            if !stopped && reporter.outputBroken {
                stopped = true
                batch.stop()
            }
        }
        ticker?.cancel()
        if stopped {
            await batch.finished()
            throw ExitCode(128 + SIGPIPE)
        }
        let signal = interruption.signal
        reporter.finish(interruptedBy: signal)
        if let signal { throw ExitCode(128 + signal) }
        if let problem = inputLines?.readError {
            throw RuntimeFailure("reading --input \(inputLines?.name ?? ""): \(problem)")
        }
        if let output = options.output, reporter.summary.success == 1 {
            guard let delivered else {
                throw RuntimeFailure("cannot write \(output): the response was not stored (Cache-Control: no-store)")
            }
            try copyBody(from: delivered, to: output)
        }
        let code = reporter.summary.exitCode
        if code != 0 { throw ExitCode(code) }
    }

    /// `--progress` / `--no-progress`, else a bar only on a terminal (not `dumb`).
    private func progressMode() -> Reporter.ProgressMode {
        switch options.progress {
        case true?: return .on
        case false?: return .off
        case nil: return Terminal.isTerminal(2) && !Terminal.isDumb ? .auto : .off
        }
    }

    /// Copies the stored body to `-o FILE` or stdout, streaming.
    private func copyBody(from source: String, to destination: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw RuntimeFailure("cannot read \(source): \(String(cString: strerror(errno)))") }
        defer { close(input) }
        let toStdout = destination == "-"
        let outputFD = toStdout ? 1 : open(destination, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard outputFD >= 0 else { throw RuntimeFailure("cannot write \(destination): \(String(cString: strerror(errno)))") }
        var closed = toStdout
        defer { if !closed { close(outputFD) } }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = read(input, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw RuntimeFailure("cannot read \(source): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            var offset = 0
            while offset < n {
                let w = buffer.withUnsafeBytes { write(outputFD, $0.baseAddress! + offset, n - offset) }
                if w < 0 && errno == EINTR { continue }
                guard w > 0 else { throw RuntimeFailure("cannot write \(destination): \(String(cString: strerror(errno)))") }
                offset += w
            }
        }
        if !toStdout {
            closed = true
            guard close(outputFD) == 0 else {
                throw RuntimeFailure("cannot write \(destination): \(String(cString: strerror(errno)))")
            }
        }
    }
}
