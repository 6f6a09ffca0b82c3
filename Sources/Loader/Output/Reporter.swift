import Fetch
import RemoteCache
import Support

/// Turns a batch's events into the documented output (SPEC §3): one line
/// per URL at its terminal phase (or JSON Lines, one per phase change),
/// then a summary; warnings and the progress bar on stderr. It owns the
/// writing (the buffer, the lock, when to flush, when to draw the bar); the
/// lines themselves are `ResultLine`'s.
///
/// Result lines go to stdout unless stdout carries a body (`-o -`). Every
/// write happens under one lock, so the progress bar (redrawn by a ticker)
/// is always erased before result lines are written and drawn again after:
/// the two never share a line. Public: a Swift program that runs a
/// `BatchRun` prints what the tool prints.
public final class Reporter: Sendable {
    /// Human lines, or JSON Lines (`--json`).
    public enum Style: Sendable { case human, json }

    /// When to show the progress bar: `auto` shows it once a second URL is
    /// known, if stderr is a terminal.
    public enum ProgressMode: Sendable {
        case off, auto, on

        /// `--progress` (true) / `--no-progress` (false), else (nil) a bar
        /// only when stderr is a terminal that is not `dumb` and the run is
        /// not `quiet` (`-q` prints only failures: no bar unless asked for).
        public init(requested: Bool?, quiet: Bool = false) {
            switch requested {
            case true?: self = .on
            case false?: self = .off
            case nil: self = !quiet && Terminal.isTerminal(2) && !Terminal.isDumb ? .auto : .off
            }
        }
    }

    let style: Style
    let quiet: Bool
    let verbose: Bool
    /// The lines themselves (SPEC §3), built by `ResultLine`.
    let lines: ResultLine
    private let started = monotonicSeconds()
    /// Whether a progress bar may be shown at all (for `abandon`, which may not get the lock).
    private let progressEnabled: Bool
    /// Whether the result lines go to a terminal (someone may be watching them come).
    private let resultsToTerminal: Bool
    private let state: Locked<State>

    /// Every write of results happens with `out` inside the lock; its buffer
    /// also flushes itself when full, erasing the bar first (`barDrawn`).
    /// Unchecked: `out` is not thread-safe, and is reached only inside
    /// `state`'s lock (a `Locked` is `Sendable` only for a `Sendable` value).
    private struct State: @unchecked Sendable {
        let out: LineOutput
        /// The URL column's width so far (`ResultLine.appendURLColumn`).
        var urlColumn = 0
        var counted = BatchTotals()
        var progressMode: ProgressMode
        var bar = ProgressBar()
        var lastDraw = -Double.infinity
        var progressSource: (@Sendable () -> (known: Int, total: Int?))?
        var hostSource: (@Sendable () -> (active: Int, paused: Int, running: Int))?
        var transfers: TransferProgress?
    }

    /// `-v` host notes not written yet (`hostNote`), in the order they came:
    /// the writers write them first. A lock of their own, never held while
    /// writing, so a note's caller never waits for a write.
    private let notes = Locked<[HostNote]>([])

    /// `quiet` (`-q`) leaves out success lines and the summary, `verbose`
    /// (`-v`) adds the HTTP detail and host notes; `resultsToStderr` when
    /// stdout carries a body (`-o -`).
    public init(style: Style, quiet: Bool, verbose: Bool, resultsToStderr: Bool, progress: ProgressMode) {
        self.style = style
        self.quiet = quiet
        self.verbose = verbose
        let fd: Int32 = resultsToStderr ? 2 : 1
        resultsToTerminal = Terminal.isTerminal(fd)
        lines = ResultLine(
            color: style == .human && Terminal.colorAllowed(on: fd), verbose: verbose, quiet: quiet,
            alignURLs: style == .human && resultsToTerminal)
        progressEnabled = progress != .off
        state = Locked(State(out: LineOutput(fd: fd), progressMode: progress))
    }

    /// The events this reporter reads from a batch, and how soon it needs
    /// them (`BatchRun`'s `demand`). Human lines have no `loading` line, so
    /// only `--json` asks for `loading` events. Results on a terminal come
    /// as `EventDemand.everything` does (within about 5 ms while results
    /// keep coming, 30 ms for the last of a run); into a file or a pipe a
    /// run of results may wait up to `Defaults.resultLatencyOffTerminal`
    /// (and its tail twice that), so the batch wakes the reporter less.
    public var demand: EventDemand {
        var demand = EventDemand.everything
        demand.loading = style == .json
        if !resultsToTerminal {
            demand.latency = Defaults.resultLatencyOffTerminal
            demand.tailLatency = 2 * Defaults.resultLatencyOffTerminal
            demand.runLength = Defaults.reportedEventsAtOnce
        }
        return demand
    }

    /// The totals of the URLs reported so far.
    public var summary: BatchTotals { state.withLock { $0.counted } }

    /// The results can no longer be written: stdout was a pipe whose reader
    /// went away, as with `| head` (`outputError` is `EPIPE`: the run should
    /// stop), or a write failed otherwise (a full disk: the lines are lost,
    /// the run goes on; see `follow`).
    public var outputBroken: Bool { state.withLock { $0.out.broken } }
    /// The `errno` of the write that failed, when `outputBroken`.
    public var outputError: Int32 { state.withLock { $0.out.writeError } }

    /// Where the progress bar learns how many URLs there are, how many
    /// bytes have arrived, how many hosts are active or paused and how many transfers run (sampled
    /// at each redraw).
    func attachProgress(_ transfers: TransferProgress?, hosts: (@Sendable () -> (active: Int, paused: Int, running: Int))? = nil,
                        _ source: @escaping @Sendable () -> (known: Int, total: Int?)) {
        state.withLock { state in
            state.progressSource = source
            state.hostSource = hosts
            state.transfers = transfers
        }
    }

    /// `-v`: a host was paused, its limit changed, or it was given up on.
    /// A batch's notes come from its consumer (`BatchRun`'s events hand each
    /// over after the events before it), so they are in order with the
    /// results. It only queues the note: the reporter's writer (the next
    /// `report`, `warn`, `tick` or `finish`) writes it, before the lines it
    /// writes then, so a slow stderr never stalls anyone. `follow` ticks
    /// while `-v` is on, so a note waits at most
    /// `Defaults.progressRedrawInterval` for its writer.
    public func hostNote(_ note: HostNote) {
        guard verbose else { return }
        notes.withLock { $0.append(note) }
    }

    /// The host scheduler's totals, for the summary (set before `finish`).
    func setHostCounts(_ counts: HostCounts) {
        state.withLock { $0.counted.hosts = counts }
    }

    /// Counts the event and writes its line (buffered for cache answers),
    /// with its warnings on stderr.
    public func report(_ event: LoadEvent) {
        state.withLock { state in
            writeNotes(&state)
            show(report(event, &state), &state)
        }
    }

    /// `report` for each of `events`, in order, under one lock. The run's
    /// lines are written at its end, in one write (not one per network
    /// result; nor left in the buffer: the next run may be a while coming).
    public func report(contentsOf events: [LoadEvent]) {
        var events = events
        report(taking: &events)
    }

    /// `report(contentsOf:)` of events the caller gives away (`follow`'s):
    /// each is moved out of the array (reversed through its buffer, then
    /// popped) and lent to `report` from there; `events` is left empty.
    /// Lent from the array, each event was copied for the call (its strings
    /// and result retained, then released: ~300 instructions a hit), with
    /// `for event in events` and with the array's buffer alike, as the
    /// compiler cannot tell that `report` leaves the array alone.
    func report(taking events: inout [LoadEvent]) {
        events.withUnsafeMutableBufferPointer { $0.reverse() }
        state.withLock { state in
            writeNotes(&state)
            while let event = events.popLast() { _ = report(event, &state) }
            show(true, &state)
        }
    }

    /// Counts the event and buffers its line; true when it should be shown
    /// now (`show`), not left in the buffer.
    @inline(__always)   // out of line, it copied each event's phase to read it (~170 instructions a hit)
    private func report(_ event: LoadEvent, _ state: inout State) -> Bool {
        // A background refresh's outcome is not a URL's report: the totals leave it out.
        if !event.refreshed { state.counted.count(event.phase) }
        state.bar.done = state.counted.total
        state.bar.failed = state.counted.failure
        switch style {
        case .json: state.out.line { ResultLine.json(event, into: &$0); return true }
        case .human: state.out.line { lines.human(event, urlColumn: &state.urlColumn, into: &$0) }
        }
        // Network results are slow anyway: show them at once. Cache
        // answers stay in the buffer, so 10,000 hits cost few writes (a
        // run of events, `report(contentsOf:)`, is written at its end).
        var buffered = false
        switch event.phase {
        case .success(let result):
            if let warning = result.warning { warn("\(event.url): \(warning)", to: state.out) }
            if let problem = result.storeFailure { warn("\(event.url): the cache could not be updated: \(problem)", to: state.out) }
            buffered = result.source == .cache
        case .empty:
            buffered = true
        case .loading, .failure:
            break
        }
        return !buffered
    }

    /// After a run of events: the bar's redraw (which writes the buffered
    /// lines), or the lines written now when one of them should be shown now.
    private func show(_ now: Bool, _ state: inout State) {
        if state.progressMode != .off {
            refresh(&state)
            return
        }
        if now { state.out.flush() }
    }

    /// Calls `tick` every `Defaults.progressRedrawInterval` until the task
    /// is cancelled; nil (no task) when no bar is shown.
    func startTicker() -> Task<Void, Never>? {
        guard progressEnabled || verbose else { return nil }
        return Task { [self] in
            while !Task.isCancelled {
                try? await Task.sleep(nanoseconds: UInt64(Defaults.progressRedrawInterval * 1e9))
                tick()
            }
        }
    }

    /// Called about ten times a second while the batch runs: writes the host
    /// notes, shows buffered lines and redraws the bar.
    func tick() {
        // `-v` alone: the lock only when there is a note to write.
        if !progressEnabled && notes.withLock({ $0.isEmpty }) { return }
        state.withLock { state in
            writeNotes(&state)
            if state.progressMode != .off { refresh(&state) }
        }
    }

    /// Erases the bar and prints the summary: a JSON line last, or one line
    /// on stderr for people (unless `-q`, or a single uninterrupted URL).
    public func finish(interruptedBy signo: Int32?) {
        state.withLock { state in
            writeNotes(&state)
            state.out.eraseBar()
            state.progressMode = .off
            let duration = monotonicSeconds() - started
            switch style {
            case .json:
                state.out.line(ResultLine.summaryJSON(state.counted, duration: duration, interrupted: signo.map(Self.signalName)))
            case .human:
                state.out.flush()
                if let signo {
                    Console.error("asyncfetch: interrupted by \(Self.signalName(signo)): " + ResultLine.summaryText(state.counted, duration: duration))
                } else if state.counted.total > 1 && !quiet {
                    Console.error(ResultLine.summaryText(state.counted, duration: duration))
                }
            }
            state.out.flush()
        }
    }

    /// `asyncfetch: warning: MESSAGE` on stderr, after the lines so far.
    public func warn(_ message: String) {
        state.withLock { state in
            writeNotes(&state)
            warn(message, to: state.out)
        }
    }

    /// The remote tier's counts, for the summary (set before `finish`).
    func setRemoteStats(_ stats: RemoteCache.Stats) {
        state.withLock { $0.counted.remoteTier = stats }
    }

    /// For a second Ctrl-C, on the way to `_exit`: takes the lock if it
    /// comes free soon, erases the bar, writes out what stdout has room for,
    /// and keeps the lock so nothing more is written. A writer that holds the
    /// lock, blocked by a reader that stopped reading, is left where it is:
    /// into a pipe it waits between two lines (`WholeLineWriter`), so the
    /// exit cuts none.
    public func abandon() {
        // Lines already reported are whole under the lock: write out those
        // that fit now, so an abrupt exit loses no result it need not lose,
        // and never wait for a reader (the exit is due at once).
        let taken = state.acquireForever(within: Defaults.abandonWait) { state in
            state.out.eraseBar()
            state.out.flushWithoutWaiting()
        }
        if !taken && progressEnabled {
            // A writer holds the lock: erase a bar it may have drawn.
            Console.send(2, Array("\r\u{1B}[K".utf8))
        }
    }

    // MARK: - Under the lock

    /// The queued host notes on stderr, after the lines so far.
    private func writeNotes(_ state: inout State) {
        guard verbose else { return }
        let queued = notes.withLock { notes -> [HostNote] in
            defer { notes.removeAll() }
            return notes
        }
        guard !queued.isEmpty else { return }
        state.out.eraseBar()
        state.out.flush()
        for note in queued { Console.error("asyncfetch: " + ResultLine.hostNote(note)) }
    }

    private func warn(_ message: String, to out: LineOutput) {
        out.eraseBar()
        out.flush()
        Console.error("asyncfetch: warning: \(ShownText.of(message))")
    }

    /// At most every `progressRedrawInterval`: erase the bar, write the
    /// buffered lines, draw the bar again.
    private func refresh(_ state: inout State) {
        let now = monotonicSeconds()
        guard now - state.lastDraw >= Defaults.progressRedrawInterval else { return }
        state.lastDraw = now
        if let counts = state.progressSource?() {
            state.bar.known = counts.known
            state.bar.total = counts.total
        }
        state.bar.elapsed = now - started
        if let hosts = state.hostSource?() {
            state.bar.hostsActive = hosts.active
            state.bar.hostsPaused = hosts.paused
            state.bar.transfersRunning = hosts.running
        }
        if let transfers = state.transfers {
            state.bar.bytes = transfers.receivedBytes
            state.bar.expectedBytes = transfers.unknownLengths == 0 ? transfers.expectedBytes : nil
            state.bar.bodiesInFlight = transfers.bodiesInFlight
        }
        state.bar.record()
        // One URL gets a bar too once its transfer takes a while (a quick one never flashes one),
        // while its body arrives: not after it is done, when the bar would only flash before the exit.
        // A body whose every byte came is done arriving, though its transfer is still counted in
        // flight until it is checked and stored (a loaded machine drew "153 B of 153 B" there).
        let arriving = state.bar.bytes > 0 && state.bar.bytes < (state.bar.expectedBytes ?? .max)
        let slowSingle = state.bar.bodiesInFlight > 0 && arriving
            && state.bar.elapsed >= Defaults.progressSingleURLDelay
        let visible = state.progressMode == .on || state.bar.known > 1 || (state.bar.total ?? 0) > 1 || slowSingle
        state.out.flush()   // erases the bar first when there are lines
        guard visible else { return }
        // Drawn over the old bar (carriage return, erase to end of line).
        Console.send(2, Array(("\r\u{1B}[K" + state.bar.render(width: Terminal.width(2))).utf8))
        state.out.barDrawn = true
    }

    /// `SIGINT` / `SIGTERM` for messages.
    static func signalName(_ signo: Int32) -> String {
        switch signo {
        case 2: return "SIGINT"
        case 15: return "SIGTERM"
        default: return "signal \(signo)"
        }
    }
}
