import Fetch
import Loader
import RemoteCache
#if canImport(Glibc)
import Glibc
#endif

/// Turns loader events into the documented output (SPEC §3): one line per
/// URL at its terminal phase (or JSON Lines, one per phase change), then a
/// summary; warnings and the progress bar on stderr.
///
/// Result lines go to stdout unless stdout carries a body (`-o -`). Every
/// write happens under one lock, so the progress bar (redrawn by a ticker)
/// is always erased before result lines are written and drawn again after:
/// the two never share a line.
final class Reporter: @unchecked Sendable {
    enum Style { case human, json }

    /// When to show the progress bar: `auto` shows it once a second URL is
    /// known, if stderr is a terminal.
    enum ProgressMode { case off, auto, on }

    let style: Style
    let quiet: Bool
    let verbose: Bool
    let color: Bool
    /// Pad the URL column to one width (on a terminal only: see `appendURLColumn`).
    let alignURLs: Bool
    private let lock = TimedLock()
    private let out: LineOutput
    private let started = monotonicSeconds()

    // Guarded by `lock`.
    /// The URL column's width so far (`appendURLColumn`).
    var urlColumn = 0
    private var counted = Summary()
    private var progressMode: ProgressMode
    private var bar = ProgressBar()
    private var barDrawn = false
    private var lastDraw = -Double.infinity
    private var progressSource: (@Sendable () -> (known: Int, total: Int?))?
    private var hostSource: (@Sendable () -> (active: Int, paused: Int))?
    private var transfers: TransferProgress?

    init(style: Style, quiet: Bool, verbose: Bool, resultsToStderr: Bool, progress: ProgressMode) {
        self.style = style
        self.quiet = quiet
        self.verbose = verbose
        let fd: Int32 = resultsToStderr ? 2 : 1
        out = LineOutput(fd: fd)
        color = style == .human && Terminal.colorAllowed(on: fd)
        alignURLs = style == .human && Terminal.isTerminal(fd)
        progressMode = progress
        // Every write of results happens under `lock` (the buffer also
        // flushes itself when full): the bar is erased first, always.
        out.beforeWrite = { [unowned self] in eraseBarLocked() }
    }

    var summary: Summary { lock.withLock { counted } }

    /// The results can no longer be written (stdout was a pipe whose reader
    /// went away, as with `| head`): the run should stop.
    var outputBroken: Bool { lock.withLock { out.broken } }
    var outputError: Int32 { lock.withLock { out.writeError } }

    /// Where the progress bar learns how many URLs there are, how many
    /// bytes have arrived, and how many hosts are active or paused (sampled
    /// at each redraw).
    func attachProgress(_ transfers: TransferProgress?, hosts: (@Sendable () -> (active: Int, paused: Int))? = nil,
                        _ source: @escaping @Sendable () -> (known: Int, total: Int?)) {
        lock.withLock {
            progressSource = source
            hostSource = hosts
            self.transfers = transfers
        }
    }

    /// `-v`: a host was paused, its limit changed, or it was given up on.
    func hostNote(_ note: HostNote) {
        guard verbose else { return }
        let text: String
        switch note {
        case .paused(let host, let seconds, let status):
            text = "host \(host.name) answered \(status): paused for \(formatDuration(seconds))"
        case .limitChanged(let host, let from, let to):
            text = "host \(host.name): at most \(to) transfers at once (was \(from))"
        case .gaveUp(_, let failure):
            text = failure.message
        }
        lock.withLock {
            eraseBarLocked()
            out.flush()
            Console.error("asyncfetch: \(text)")
        }
    }

    /// The host scheduler's totals, for the summary (set before `finish`).
    func setHostCounts(_ counts: HostCounts) {
        lock.withLock { counted.hosts = counts }
    }

    func report(_ event: LoadEvent) {
        lock.withLock {
            // A background refresh's outcome is not a URL's report: the totals leave it out.
            if !event.refreshed { counted.count(event.phase) }
            bar.done = counted.total
            bar.failed = counted.failure
            switch style {
            case .json: out.line { jsonLine(event).render(to: &$0); return true }
            case .human: out.line { humanLine(event, into: &$0) }
            }
            // Network results are slow anyway: show them at once. Cache
            // answers stay in the buffer, so 10,000 hits cost few writes.
            var buffered = false
            switch event.phase {
            case .success(let result):
                if let warning = result.warning { warnLocked("\(event.url): \(warning)") }
                if let problem = result.storeFailure { warnLocked("\(event.url): the cache could not be updated: \(problem)") }
                buffered = result.source == .cache
            case .empty:
                buffered = true
            case .loading, .failure:
                break
            }
            if progressMode != .off {
                refreshLocked()
                return
            }
            if !buffered { out.flush() }
        }
    }

    /// Called about ten times a second while the batch runs: shows buffered
    /// lines and redraws the bar.
    func tick() {
        lock.withLock { if progressMode != .off { refreshLocked() } }
    }

    /// Erases the bar and prints the summary: a JSON line last, or one line
    /// on stderr for people (unless `-q`, or a single uninterrupted URL).
    func finish(interruptedBy signo: Int32?) {
        lock.withLock {
            eraseBarLocked()
            progressMode = .off
            let duration = monotonicSeconds() - started
            switch style {
            case .json:
                out.line(summaryJSON(duration: duration, interruptedBy: signo))
            case .human:
                out.flush()
                if let signo {
                    Console.error("asyncfetch: interrupted by \(signalName(signo)): " + summaryText(duration: duration))
                } else if counted.total > 1 && !quiet {
                    Console.error(summaryText(duration: duration))
                }
            }
            out.flush()
        }
    }

    func warn(_ message: String) {
        lock.withLock { warnLocked(message) }
    }

    /// The remote tier's counts, for the summary (set before `finish`).
    func setRemoteStats(_ stats: RemoteCache.Stats) {
        lock.withLock { counted.remoteTier = stats }
    }

    /// For a second Ctrl-C, on the way to `_exit`: waits briefly for a line
    /// being written (so stdout never ends inside a JSON object), erases the
    /// bar, and keeps the lock so nothing more is written.
    func abandon() {
        // Lines already reported are whole under the lock: write them out, so
        // an abrupt exit loses no result that was decided.
        if lock.acquire(within: Defaults.abandonWait) {
            eraseBarLocked()
            out.flush()
        } else if barDrawn {
            Console.writeAll(2, Array("\r\u{1B}[K".utf8))
        }
    }

    // MARK: - Under the lock

    private func warnLocked(_ message: String) {
        eraseBarLocked()
        out.flush()
        Console.error("asyncfetch: warning: \(message)")
    }

    /// At most every `progressRedrawInterval`: erase the bar, write the
    /// buffered lines, draw the bar again.
    private func refreshLocked() {
        let now = monotonicSeconds()
        guard now - lastDraw >= Defaults.progressRedrawInterval else { return }
        lastDraw = now
        if let counts = progressSource?() {
            bar.known = counts.known
            bar.total = counts.total
        }
        bar.elapsed = now - started
        if let hosts = hostSource?() {
            bar.hostsActive = hosts.active
            bar.hostsPaused = hosts.paused
        }
        if let transfers {
            bar.bytes = transfers.receivedBytes
            bar.expectedBytes = transfers.unknownLengths == 0 ? transfers.expectedBytes : nil
            bar.bodiesInFlight = transfers.bodiesInFlight
        }
        // One URL gets a bar too once its transfer takes a while (a quick one never flashes one).
        let slowSingle = bar.bytes > 0 && bar.elapsed >= Defaults.progressSingleURLDelay
        let visible = progressMode == .on || bar.known > 1 || (bar.total ?? 0) > 1 || slowSingle
        out.flush()   // erases the bar first when there are lines
        guard visible else { return }
        // Drawn over the old bar (carriage return, erase to end of line).
        Console.writeAll(2, Array(("\r\u{1B}[K" + bar.render(width: Terminal.width(2))).utf8))
        barDrawn = true
    }

    private func eraseBarLocked() {
        guard barDrawn else { return }
        Console.writeAll(2, Array("\r\u{1B}[K".utf8))
        barDrawn = false
    }

    private func summaryText(duration: Double) -> String {
        let s = counted
        let parts = ["\(s.success) success", "\(s.failure) failure", "\(s.empty) empty"]
        var sources = "cache \(s.cache), network \(s.network), revalidated \(s.revalidated), stale \(s.stale)"
        var tier = ""
        if let r = s.remoteTier {
            sources += ", remote \(s.remote)"
            tier = "; remote cache: \(r.hits) hits, \(r.misses) misses, \(r.uploads) uploads, \(r.errors) errors"
        }
        if let h = s.hosts, h.hostsPaused > 0 || h.hostsGivenUp > 0 {
            tier += "; hosts: \(h.hosts), \(h.hostsPaused) paused, \(h.hostsGivenUp) given up"
        }
        let noun = s.total == 1 ? "URL" : "URLs"
        return "\(s.total) \(noun): \(parts.joined(separator: ", ")) (\(sources)); \(formatBytes(s.bytes)) in \(formatDuration(duration))" + tier
    }

    private func summaryJSON(duration: Double, interruptedBy signo: Int32?) -> String {
        let c = counted
        var s = JSONLine()
        s.add("total", c.total)
        s.add("success", c.success)
        s.add("failure", c.failure)
        s.add("empty", c.empty)
        s.add("cache", c.cache)
        s.add("network", c.network)
        s.add("revalidated", c.revalidated)
        s.add("stale", c.stale)
        if let r = c.remoteTier {
            s.add("remote", c.remote)
            var tier = JSONLine()
            tier.add("hits", r.hits)
            tier.add("misses", r.misses)
            tier.add("readErrors", r.readErrors)
            tier.add("uploads", r.uploads)
            tier.add("uploadErrors", r.uploadErrors)
            tier.add("disabled", r.disabled)
            s.add("remoteCache", object: tier)
        }
        s.add("bytes", c.bytes)
        s.add("durationMs", milliseconds: duration)
        let hosts = c.hosts ?? HostCounts()
        s.add("hosts", hosts.hosts)
        s.add("hostsPaused", hosts.hostsPaused)
        s.add("hostsGivenUp", hosts.hostsGivenUp)
        s.add("interrupted", signo.map(signalName))
        var line = JSONLine()
        line.add("summary", object: s)
        return line.rendered
    }
}
