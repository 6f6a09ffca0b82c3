import Fetch
import Support
import Synchronization

/// One batch URL's `FetchAttemptGate`: tells the host scheduler how each
/// attempt went, and on a 429 or 503 gives the URL's slot back and waits,
/// queued at the front of its host, until the host's pause is over and a
/// slot is free again. Each such wait is one of the URL's `--retries` (SPEC
/// §5: `--retries N` is N retries, 429 and 503 included): with none left
/// the URL fails with the 429 or 503, and the host is paused all the same.
/// A host given up on is not tried again, not even by a retry
/// already in its backoff (`mayRetry`) or an attempt on its way to its
/// transfer loop (`refusal`).
///
/// Each wait is resumed exactly once: by the dispatch (`tryAgain` when the
/// scheduler starts it, `stop` when the host is given up on, `cancelled`
/// when the batch is), or by the task's own cancellation, whichever comes
/// first (`resume` answers false to the later one).
final class HostAttemptGate: FetchAttemptGate {
    let host: HostKey
    private let dispatch: HostDispatch
    /// The URL's `--retries`: a pushback waits for its host only while the
    /// URL has a retry left.
    private let retries: Int
    /// The host had connected and answered when the URL started
    /// (`HostLoad.hostKnown`): `connected` and `responding` would change
    /// nothing, so they return at once, without a lock. They run on the
    /// transfer loop's thread, once per URL each; the dispatch's lock they
    /// took is the one the completion workers hold for a scheduler step.
    private let hostKnown: Bool
    /// Whether the host had more URLs queued when the URL started
    /// (`HostLoad.hostQueued`; nil: not known). When it had, the first
    /// attempt keeps its connection without asking: no dispatch lock and
    /// find on the transfer loop's thread for most URLs (every cold URL of
    /// a long list). When it had not, the attempt asks: a URL of the host
    /// read since (an attempt may wait for a transfer slot after its start)
    /// still finds the connection open; answering `false` from the start
    /// opened 10 % more connections in the internet-like preset. Later
    /// attempts come after a failure and a backoff, and ask too.
    private let queuedAtStart: Bool?
    private let askedOnce = Atomic<Bool>(false)
    /// What the batch reports at the URL's end, for a load it runs without a
    /// task (`BatchLoads`; nil otherwise). Held by the gate, which lives
    /// exactly as long as the load: its completion then captures the gate
    /// alone, and needs no closure context of its own per URL.
    let batchEnd: BatchLoads.End?

    private struct State {
        var waiting: ParkedContinuation<FetchRetryVerdict>?
        /// The URL holds one of its host's slots (not while it waits).
        var holdsSlot = true
        var cancelled = false
        var connected = false
        var responding = false
        /// The fetch got its answer (`answered`): reported with the slot's release.
        var answered = false
    }

    private let state = Locked(State())

    init(host: HostKey, dispatch: HostDispatch, retries: Int, hostKnown: Bool = false, queuedAtStart: Bool? = nil,
         batchEnd: BatchLoads.End? = nil) {
        self.host = host
        self.dispatch = dispatch
        self.retries = retries
        self.hostKnown = hostKnown
        self.queuedAtStart = queuedAtStart
        self.batchEnd = batchEnd
    }

    var holdsSlot: Bool { state.withLock { $0.holdsSlot } }

    /// Read as the URL ends: whether it holds its slot, and whether its
    /// fetch was answered (the report that goes with the slot's release).
    var end: (holdsSlot: Bool, answered: Bool) { state.withLock { ($0.holdsSlot, $0.answered) } }

    func connected() {
        if hostKnown { return }
        let first = state.withLock { state -> Bool in
            defer { state.connected = true }
            return !state.connected
        }
        if first { dispatch.report(.connected, host: host) }
    }

    /// The host answers: its other slots open now, not when this (perhaps
    /// long) body ends. Not on a 429 or 503: `failed` pauses the host a
    /// moment later, and slots opened in between would each send the host
    /// one more request it has just refused.
    func responding(status: Int) {
        if hostKnown || HostPolicy.isPushback(status: status) { return }
        let first = state.withLock { state -> Bool in
            defer { state.responding = true }
            return !state.responding
        }
        if first { dispatch.report(.responding, host: host) }
    }

    /// The host's connection is kept only while it has more URLs queued: a
    /// host's last URL closes its connection, unless its answer is to be
    /// retried (see `FetchAttemptGate`).
    func keepsConnection() -> Bool {
        if queuedAtStart == true, !askedOnce.exchange(true, ordering: .relaxed) { return true }
        return dispatch.hasQueued(host)
    }

    /// Noted, not reported: the URL's end reports it together with the slot
    /// it gives back (`HostDispatch.finished`: one scheduler step per URL,
    /// not two; the host's other slots opened at `responding` already).
    func answered(status: Int) {
        state.withLock { $0.answered = true }
    }

    func failed(_ error: FetchError) async -> FetchRetryVerdict {
        let outcome = Self.outcome(of: error)
        // `attempts` counts this one: a retry is left while it is at most `retries`.
        var waits = false
        if case .pushedBack = outcome, error.attempts <= retries { waits = true }
        dispatch.report(outcome, host: host, proxy: error.proxy, requeueing: waits)
        if waits { return await waitForHost() }
        if [.connect, .timeout, .dns].contains(error.kind) || error.closedBeforeAnswer, dispatch.failure(of: host) != nil {
            return .stop
        }
        return .usePolicy
    }

    /// A retry whose host was given up on during its backoff stops there:
    /// without this, the URL that reported a host's next-to-last timeout
    /// would spend one more timeout on a host nobody else may try.
    func mayRetry() -> Bool {
        dispatch.failure(of: host) == nil
    }

    /// An attempt that reaches its transfer loop after its host was given up
    /// on (a URL started, or a retry let go, just before) fails there at once
    /// with the reason: the loop ended the host's other attempts already.
    /// Asked on the loop thread before every attempt: while no host has been
    /// given up on (every URL of most runs), one atomic load and no lock. The
    /// flag is set before the loops are told to end the host's attempts, so an
    /// attempt that finds it unset reached its loop before that message.
    func refusal() -> (kind: FetchError.Kind, detail: String)? {
        guard dispatch.hasGivenUpAHost else { return nil }
        return dispatch.failure(of: host).map { ($0.errorKind, $0.message) }
    }

    /// How an attempt's failure bears on its host.
    static func outcome(of error: FetchError) -> HostDispatch.Scheduler.Outcome {
        switch error.kind {
        case .http:
            guard let status = error.status else { return .neutral }
            if HostPolicy.isPushback(status: status) {
                return .pushedBack(status: status, retryAfter: error.retryAfter)
            }
            return .answered
        case .connect: return .refused
        case .timeout: return error.responseStarted ? .timedOut : .unanswered
        case .dns: return .unresolved
        case .network: return error.closedBeforeAnswer ? .closed : .answered
        case .redirects, .tooLarge: return .answered   // the server is there
        case .tls: return error.closedBeforeAnswer ? .closed : .neutral
        case .cancelled, .io, .invalidURL, .unsupportedScheme: return .neutral
        }
    }

    /// Gives the slot back, queued at the front of the host, and waits.
    private func waitForHost() async -> FetchRetryVerdict {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<FetchRetryVerdict, Never>) in
                let cancelled = state.withLock { state -> Bool in
                    if state.cancelled { return true }
                    state.waiting = ParkedContinuation(continuation)
                    return false
                }
                if cancelled { return continuation.resume(returning: .cancelled) }
                // Refused (the batch was cancelled, or this task, which resumed the wait): the URL
                // still holds its slot, and its end gives it back.
                if !dispatch.requeue(self) { _ = resume(.cancelled) }
            }
        } onCancel: {
            state.withLock { $0.cancelled = true }
            _ = resume(.cancelled)
        }
    }

    /// The URL gives its slot back to wait (false: its wait has ended
    /// already, and it keeps the slot). Called by `HostDispatch.requeue`
    /// under the dispatch's lock, in the step whose scheduler takes the slot
    /// back: the URL's end (`HostDispatch.finished(gate:)`) then finds either
    /// the slot given back and the gate queued, or the slot still held and
    /// nothing queued. Before, the gate noted the slot given back before it
    /// asked, and took it back after a refusal in a lock section of its own:
    /// a cancelled task could end the URL in between, holding a slot it did
    /// not give back (the batch never ended).
    func givesSlotBack() -> Bool {
        state.withLock { state in
            guard state.waiting != nil else { return false }
            state.holdsSlot = false
            return true
        }
    }

    /// Ends the wait, if there is one; `tryAgain` means the scheduler gave the
    /// URL a slot. False when nobody waited (the task was cancelled first):
    /// the caller then gives that slot straight back.
    func resume(_ verdict: FetchRetryVerdict) -> Bool {
        let waiting = state.withLock { state -> ParkedContinuation<FetchRetryVerdict>? in
            defer { state.waiting = nil }
            if state.waiting != nil && verdict == .tryAgain { state.holdsSlot = true }
            return state.waiting
        }
        waiting?.resume(returning: verdict)
        return waiting != nil
    }
}
