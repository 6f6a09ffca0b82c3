import Fetch

/// The layout of result lines (`ResultLine`) and the pace of their writer (`Reporter`).
extension Defaults {
    /// On a terminal, result lines pad their URL column to the widest URL so far, up to this many characters.
    public static let urlColumnMax = 100
    /// `cache list` pads its content-type column to the longest type, up to this many characters.
    public static let listTypeColumnMax = 40
    /// The progress bar redraws at most this often (10 times a second): `Reporter.tick`'s pace.
    static let progressRedrawInterval: Double = 0.1
    /// The progress bar's rate and ETA are taken over this many seconds of
    /// the run just past (`ProgressBar.record`), not over the whole run.
    public static let progressRateWindow: Double = 5
    /// A run of one URL shows the bar once its transfer has taken this long.
    static let progressSingleURLDelay: Double = 0.5
    /// The progress bar shows a rate and an ETA once the samples they are
    /// taken over (`progressRateWindow`) span this long: over a shorter time
    /// they jump about more than they tell.
    static let progressRateAfter: Double = 0.5
    /// The progress bar's cells: at most this many, and none rather than fewer than `progressMinimumCells`.
    static let progressMaximumCells = 30
    static let progressMinimumCells = 10
    /// Columns the progress bar leaves for its text (`37/120 URLs  3 failed  4.2 MiB of 9.0 MiB  1.1 MiB/s  ETA 8s`):
    /// the bar keeps its length while the text's changes by a character or two.
    static let progressTextColumns = 56
    /// Events `Reporter.follow` takes from a run and reports under one lock,
    /// and, off a terminal, how many a run queues before it wakes the reporter.
    static let reportedEventsAtOnce = 256
    /// A second signal waits at most this long for the writer's lock, to
    /// write out the lines already reported (`Reporter.abandon`). Not what
    /// keeps lines whole: a writer still holding the lock then is blocked
    /// between two lines (`WholeLineWriter`).
    static let abandonWait: Double = 0.2
    /// A result line longer than `PIPE_BUF` waits for its pipe to be empty,
    /// looking this often, in milliseconds (`WholeLineWriter`, rule 3).
    static let pipeEmptyPollMilliseconds: Int32 = 1
    /// Results written to a file or a pipe (not a terminal) may wait this
    /// long in the batch's queue before the reporter is woken for them
    /// (`Reporter.demand`): fewer wake-ups of the reporter, which nobody
    /// watching a terminal would see.
    static let resultLatencyOffTerminal: Double = 0.025
    /// Bytes of result lines a `LineOutput` reserves, and how many waiting
    /// make it send them: a line that crosses the threshold still fits the
    /// reserved room (one write per buffer, no regrowth), unless it is longer
    /// than the difference (a very long URL; the buffer then grows).
    static let outputBufferBytes = 64 * 1024
    static let outputFlushBytes = 60 * 1024
    /// Bytes one `sendfile` call copies of a body into `--output-dir` where
    /// no reflink can be made; a larger body takes several calls.
    static let outputCopyChunkBytes = 1 << 30
}
