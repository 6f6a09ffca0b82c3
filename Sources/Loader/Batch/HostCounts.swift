/// Run totals of a scheduler, for the summary and the progress display.
public struct HostCounts: Sendable, Equatable {
    /// Distinct hosts scheduled.
    public var hosts = 0
    /// Hosts paused at least once.
    public var hostsPaused = 0
    /// Hosts given up on.
    public var hostsGivenUp = 0

    public init() {}
}
