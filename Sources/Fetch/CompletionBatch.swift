import Glibc

/// The batch of completions a completion worker is running
/// (`CompletionWorker`): a completion may defer work to the batch's end
/// (`atEnd`), and it then runs on the same thread once every completion of
/// the batch has run. A transfer loop hands a worker the transfers one round
/// finished all at once (`CurlLoop.handOff`), so what each completion
/// would do for itself afterwards (a batch's scheduler step, giving its slot
/// back and starting the loads that slot lets start) can be done once for
/// the round (issue 22: `BatchLoads`).
///
/// Threading: a batch belongs to its worker's thread, which finds it through
/// a thread-specific pointer; on any other thread `atEnd` answers false and
/// the caller does the work itself.
public enum CompletionBatch {
    /// Runs `body` on this thread once the completion worker's current batch
    /// has run every completion (after any body deferred before it). False,
    /// with `body` dropped, when this thread is not a completion worker's.
    public static func atEnd(_ body: @escaping () -> Void) -> Bool {
        guard let pointer = pthread_getspecific(key) else { return false }
        Unmanaged<Deferred>.fromOpaque(pointer).takeUnretainedValue().bodies.append(body)
        return true
    }

    /// One worker thread's deferred work; only that thread touches it.
    final class Deferred {
        fileprivate var bodies: [() -> Void] = []

        /// Makes this the calling thread's batch for `atEnd`. The worker keeps it until its thread ends.
        func attach() {
            let rc = pthread_setspecific(CompletionBatch.key, Unmanaged.passUnretained(self).toOpaque())
            precondition(rc == 0, "pthread_setspecific failed: \(rc)")
        }

        /// Runs what the batch's completions deferred, in order (and what that defers in turn).
        func runAll() {
            while !bodies.isEmpty {
                var now: [() -> Void] = []
                swap(&now, &bodies)
                for body in now { body() }
            }
        }
    }

    /// The thread-specific slot of a worker thread's `Deferred` (nil on every other thread).
    fileprivate static let key: pthread_key_t = {
        var key = pthread_key_t()
        let rc = pthread_key_create(&key, nil)
        precondition(rc == 0, "pthread_key_create failed: \(rc)")
        return key
    }()
}
