import Fetch

/// The command line's own limits, beside the library's in `Defaults`.
extension Defaults {
    /// The progress bar redraws at most this often (10 times a second).
    static let progressRedrawInterval: Double = 0.1
    /// A run of one URL shows the bar once its transfer has taken this long.
    static let progressSingleURLDelay: Double = 0.5
    /// After SIGINT/SIGTERM the run normally ends within milliseconds; if
    /// something hangs, it is ended anyway after this long.
    static let interruptGrace: Double = 3
    /// A second signal waits at most this long for a line being written,
    /// so that stdout never ends in half a JSON object.
    static let abandonWait: Double = 0.2
    /// `cache list` pads its content-type column to the longest type, up to this many characters.
    static let listTypeColumnMax = 40
}
