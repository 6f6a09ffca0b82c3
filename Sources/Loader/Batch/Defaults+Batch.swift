import Fetch

/// How a batch takes up its URLs (`LoadBatch`) and schedules their hosts (`HostDispatch`).
extension Defaults {
    /// URLs a batch takes up at once (fewer when its backlog has less room).
    /// Each chunk ends with a serial hand-off (the second task's wake-up, the
    /// tasks' last blocks ending unevenly, its answers queued in order): 512
    /// has a quarter of 128's, for 1.6 % fewer instructions and a few per
    /// cent less wall on 10,000 hits (bench/README, session 17).
    static let batchChunkURLs = 512

    /// Events a batch may run ahead of its consumer before it waits
    /// (`LoadBatch`'s `backlog`).
    public static let batchBacklog = 1024

    /// URLs the hosts' queues may hold before the reader waits: how far the
    /// input is read ahead of the transfers. The busiest host drains slowest,
    /// so its queue fills most of this; with too little, the reader crawls
    /// at that host's pace and a host listed late starts late (a host that
    /// never answers, listed at 4,355 of 5,000, started 13 s into the run with
    /// 1,024). Bounded, so memory stays flat in the length of the list.
    public static let batchQueueLimit = 4096

    /// How many queued URLs a queued load with a stored entry (a
    /// revalidation: its decoded record, headers and paths, ~1.2 KB against
    /// ~300 bytes for a cold URL) counts as against `batchQueueLimit`: 1,024
    /// revalidations are read ahead, not 4,096. At 4,096, `--refresh` of
    /// 10,000 cached URLs from one host peaked at 30 MB RSS, the worst
    /// loopback case (issue 22: ≤ 30 MB); at 1,024, about 3 MB less.
    public static let batchStoredEntryWeight = 4

    /// How long after a paused host's pause ends the scheduler's timer
    /// fires: a little late, so that the clock it then reads is past the
    /// pause's end and the host starts, rather than the timer being armed
    /// again for the same moment.
    static let hostPauseTimerSlack: Double = 0.001

    /// `EventDemand.everything`, what someone watching results live needs:
    /// an event waits at most this long in the batch's queue while results
    /// keep coming (`EventDemand.latency`), …
    public static let liveEventLatency: Double = 0.005
    /// … the last of a run of results about this much longer (`EventDemand.tailLatency`), …
    public static let liveEventTailLatency: Double = 0.025
    /// … and the consumer is woken at once when this many are queued (`EventDemand.runLength`).
    public static let liveEventRunLength = 64
}
