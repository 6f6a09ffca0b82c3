/// Where the tier's uploads take their transfer slots: the run's `--jobs`
/// bound (SPEC §6, "in all"), shared with the URLs' own transfers. A fetch
/// run's batch lends them (`HostDispatch`), and so do a library caller's
/// single loads (`LoadSlots`, `LoaderOptions.jobs`); without one (`cache
/// pull`, a `RemoteCache` used on its own) uploads hold no slot.
public protocol UploadSlots: Sendable {
    /// Runs `work` holding one slot, given back when it returns. False,
    /// without running it, when none will come (the run was cancelled).
    func run(_ work: () async -> Void) async -> Bool
}
