import Fetch

/// The command line's own limits, beside the library's in `Defaults`.
extension Defaults {
    /// After SIGINT/SIGTERM the run normally ends within milliseconds; if
    /// something hangs, it is ended anyway after this long.
    static let interruptGrace: Double = 3
}
