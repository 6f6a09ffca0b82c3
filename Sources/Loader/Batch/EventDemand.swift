import enum Fetch.Defaults

/// What a batch's consumer reads, and how soon it must have it: the batch
/// builds no event nobody reads, and wakes its consumer (a task on the
/// cooperative pool, several microseconds and a context switch or two per
/// wake-up) no more often than the consumer needs.
///
/// The default, `everything`, is what a `LoadBatch` has always given: every
/// phase change, each network result within a few milliseconds. The tool's
/// `Reporter` asks for less when its output lets it (`Reporter.demand`).
public struct EventDemand: Sendable, Equatable {
    /// Each network load's `loading` event (before its end, in the order
    /// the host scheduler starts them). Off: only the terminal events (and
    /// background refreshes' outcomes), and the `loading` events are not
    /// even built (on a revalidation that is about 5 k instructions per URL
    /// on the transfer loop's thread).
    public var loading: Bool
    /// Seconds an event may wait in the queue before the producer that
    /// queues the next one wakes the consumer.
    public var latency: Double
    /// How often, while events keep coming, a timer looks for events no
    /// further event came to wake the consumer for (the last of a run of
    /// results): an event waits at most about `latency + tailLatency`. An
    /// event queued when nothing else was (a slow batch's results) waits
    /// about `latency`.
    public var tailLatency: Double
    /// The consumer is woken at once when this many events are queued (at
    /// most the batch's backlog, so that a full backlog never waits).
    public var runLength: Int

    /// Latencies NaN or below 0 mean 0, and longer than 31 years (`.infinity`
    /// included) mean that: the batch's timer sleeps them in nanoseconds
    /// (a negative or infinite one trapped there).
    public init(loading: Bool, latency: Double, tailLatency: Double, runLength: Int) {
        self.loading = loading
        self.latency = Self.bounded(latency)
        self.tailLatency = Self.bounded(tailLatency)
        self.runLength = max(1, runLength)
    }

    /// This demand with its fields brought into range as `init` does (they
    /// may have been set since): what a batch works with.
    var bounded: EventDemand {
        EventDemand(loading: loading, latency: latency, tailLatency: tailLatency, runLength: runLength)
    }

    private static func bounded(_ seconds: Double) -> Double {
        seconds.isNaN ? 0 : min(max(0, seconds), 1e9)
    }

    /// Every event, each within about 5 ms while results keep coming (30 ms
    /// for the last of a run): what someone watching results live needs.
    public static let everything = EventDemand(loading: true, latency: Defaults.liveEventLatency,
                                               tailLatency: Defaults.liveEventTailLatency,
                                               runLength: Defaults.liveEventRunLength)
}
