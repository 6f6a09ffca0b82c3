import RemoteCache
import Support

/// Bounds the network loads of `ImageLoader.load` and `phases(for:)` (and
/// the refreshes `load` leaves in the background) as a batch bounds its
/// own (SPEC §6): at most `LoaderOptions.jobs` at once in all, at most
/// `jobsPerHost` to one host; a load waiting for its host holds no slot, so
/// one busy host cannot starve the others, and hosts with loads waiting are
/// served in turn. 500 loads from 500 tasks then run `jobs` at a time, as
/// an app that sets a limit expects (Nuke's, SDWebImage's and Kingfisher's
/// download limits bound every load). A batch schedules its own transfers:
/// it does not take these slots.
///
/// A load waits here before its transfer starts; cancelling its task ends
/// the wait at once (`cancelled`). The rules live in `LoadSlotsState`; this
/// class holds it in a lock and resumes the waiters outside it.
final class LoadSlots: Sendable {
    private let state: Locked<LoadSlotsState<CheckedContinuation<Bool, Never>>>

    init(jobs: Int, jobsPerHost: Int) {
        state = Locked(LoadSlotsState(jobs: jobs, jobsPerHost: jobsPerHost))
    }

    /// Loads waiting for a slot now (tests wait for a queue to form before they free a slot).
    var waiting: Int { state.withLock { $0.waiting } }

    /// Runs `work` holding one of `host`'s slots; `cancelled` without
    /// running it when the task is cancelled while it waits for one.
    func run(host: HostKey, _ work: () async -> Phase) async -> Phase {
        await holding(host, work) ?? SharedLoadState<CheckedContinuation<Phase, Never>>.cancelled
    }

    /// `work`'s answer, run holding one of `host`'s slots; nil without
    /// running it when the task is cancelled while it waits for one.
    private func holding<Answer>(_ host: HostKey, _ work: () async -> Answer) async -> Answer? {
        let id = state.withLock { $0.ticket() }
        let granted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                perform(state.withLock { $0.wait(id, host: host, continuation) })
            }
        } onCancel: {
            perform(state.withLock { $0.leave(id) })
        }
        guard granted else { return nil }
        let answer = await work()
        perform(state.withLock { $0.release(id, host: host) })
        return answer
    }

    private func perform(_ action: LoadSlotsState<CheckedContinuation<Bool, Never>>.Action) {
        guard case .resume(let waiters) = action else { return }
        for (waiter, granted) in waiters { waiter.resume(returning: granted) }
    }
}

/// The remote tier's uploads after `load` and `phases(for:)` take these
/// slots too (SPEC §6: `jobs` bounds transfers in all, as `--jobs` does for
/// the tool's uploads), all under one host of their own (`uploads`), so
/// they also keep to `jobsPerHost` and take their turn with the loads'
/// hosts. A load never waits for an upload (it is queued; its worker waits),
/// so `jobs` 1 cannot deadlock.
extension LoadSlots: UploadSlots {
    /// The queue the tier's uploads wait in (not a URL's host: no load is scheduled under it).
    static let uploads = HostKey(origin: "upload:", name: "remote cache uploads")

    func run(_ work: () async -> Void) async -> Bool {
        await holding(Self.uploads, work) != nil
    }
}
