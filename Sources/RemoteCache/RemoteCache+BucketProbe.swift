import Fetch
import Support

/// An S3 tier's question, at the run's first miss, whether its bucket exists:
/// the misses that come meanwhile wait for the answer (`afterMiss`).
extension RemoteCache {
    /// An S3 tier's question whether its bucket exists, asked at the run's first miss.
    enum BucketProbe {
        case notAsked
        /// Asked; the misses that came meanwhile wait for the answer, each on a
        /// task of its read's handle (`waitForProbe`), so that cancelling that
        /// read ends its wait at once.
        case asking([ObjectIdentifier: CheckedContinuation<ProbeWait, Never>])
        /// Answered: whether the bucket may exist.
        case answered(Bool)
    }

    /// How a miss's wait for the bucket probe ended.
    enum ProbeWait: Sendable {
        /// Whether the bucket may exist (false also for a read cancelled or a tier turned off: `.unavailable`).
        case answered(Bool)
        /// The probe was stopped (its read cancelled): this miss asks again.
        case askAgain
    }

    /// A miss answers once its S3 tier's bucket is known to exist: `answer`
    /// is called with whether it may exist, at once when that is known or the
    /// tier is not S3. At the run's first miss the bucket is asked once
    /// (`RemoteLocation.bucketProbeURL`), in that miss's slot (`--jobs` bounds
    /// the probe too) and on its handle; the misses that come meanwhile wait
    /// for the same answer, so that none of them reports "not in the remote
    /// cache" or sends its URL to the origin (and its upload after) before a
    /// misspelled bucket is known. Such a bucket answers 404 to every read, a
    /// miss, and the tier is turned off now rather than at the first upload's
    /// 404 (or never, in `cache pull`). Any other answer (the listing, or 403
    /// to a key without `s3:ListBucket`, or a timeout) says nothing: the tier
    /// goes on. Not counted as a read.
    /// Cancelling a read ends it at once (`answer(false)`: `.unavailable`),
    /// whether it waits (its wait is a task of its handle) or asks: a probe
    /// stopped that way is asked again by the next miss still waiting.
    func afterMiss(_ handle: FetchHandle, answer: @escaping @Sendable (Bool) -> Void) {
        guard let url = location.bucketProbeURL, let bucket = location.bucket else { return answer(true) }
        let id = handle.id
        enum Step { case answer(Bool), wait, ask }
        let step = state.withLock { s -> Step in
            switch s.probe {
            case .answered(let exists):
                return .answer(exists)
            case .asking:
                return .wait
            case .notAsked:
                guard !s.counters.disabled else { return .answer(false) }
                s.probe = .asking([:])
                s.running[id] = (handle, .read)
                return .ask
            }
        }
        switch step {
        case .answer(let exists):
            return answer(exists)
        case .wait:
            return handle.continueOnTask { [self] in
                switch await waitForProbe(id) {
                case .answered(let exists): answer(exists)
                case .askAgain where Task.isCancelled: answer(false)
                case .askAgain: afterMiss(handle, answer: answer)
                }
            }
        case .ask:
            break
        }
        client.start(FetchRequest(url: url), into: DiscardSink(), handle: handle) { [self] fetched in
            let end: ProbeWait
            switch fetched {
            case .failure(let error) where error.kind == .http && error.status == 404:
                stop(.turnOff("the bucket \(bucket) does not exist (a listing of it was answered \(error.message))"), id: id)
                end = .answered(false)
            case .failure(let error) where error.kind == .cancelled:
                end = .askAgain
            default:
                end = .answered(true)
            }
            let waiting = state.withLock { s -> [CheckedContinuation<ProbeWait, Never>] in
                s.running.removeValue(forKey: id)
                guard case .asking(let waiting) = s.probe else { return [] }
                if case .answered(let exists) = end { s.probe = .answered(exists) } else { s.probe = .notAsked }
                return Array(waiting.values)
            }
            if case .answered(let exists) = end { answer(exists) } else { answer(false) }
            for waiter in waiting { waiter.resume(returning: end) }
        }
    }

    /// A miss's wait for the bucket probe that another miss asks (`afterMiss`),
    /// on its read's task: ends with the probe's answer, or at once with
    /// `.answered(false)` when that task is cancelled.
    private func waitForProbe(_ id: ObjectIdentifier) async -> ProbeWait {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<ProbeWait, Never>) in
                // Under the lock: a cancel checked here, or one that comes after, finds the continuation (`onCancel`).
                let now = state.withLock { s -> ProbeWait? in
                    if Task.isCancelled { return .answered(false) }
                    switch s.probe {
                    case .answered(let exists): return .answered(exists)
                    case .notAsked: return .askAgain
                    case .asking(var waiting):
                        waiting[id] = continuation
                        s.probe = .asking(waiting)
                        return nil
                    }
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<ProbeWait, Never>? in
                guard case .asking(var waiting) = s.probe, let waiter = waiting.removeValue(forKey: id) else { return nil }
                s.probe = .asking(waiting)
                return waiter
            }
            waiter?.resume(returning: .answered(false))
        }
    }
}
