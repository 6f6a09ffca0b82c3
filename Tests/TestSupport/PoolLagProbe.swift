import Foundation
import Glibc

/// The cooperative pool's lag while it runs: a thread of its own starts a
/// task every 5 ms and notes how late each began. Under a loaded machine the
/// pool runs a ready task hundreds of milliseconds (seconds, at a load of 40
/// on 2 cores) late; a fetch's answer, resumed on that pool, is as late.
/// A test bounds a latency by its limit plus `worstLag`, so that it fails on
/// a slow engine, not on a busy machine.
/// The probe's own thread is late too when the machine leaves the whole
/// process waiting for a core (no task can then be started late, nor measured):
/// how much longer than 5 ms each of its sleeps took counts as lag as well.
public final class PoolLagProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var worst = 0.0   // guarded by lock
    private var stopped = false   // guarded by lock

    public init() {
        Thread.detachNewThread { [self] in
            while !lock.withLock({ stopped }) {
                let at = Self.now()
                Task.detached { let lag = Self.now() - at; self.lock.withLock { self.worst = max(self.worst, lag) } }
                usleep(5_000)
                let overslept = Self.now() - at - 0.005
                lock.withLock { worst = max(worst, overslept) }
            }
        }
    }

    /// The longest a task waited to begin so far.
    public var worstLag: Double { lock.withLock { worst } }

    public func stop() { lock.withLock { stopped = true } }

    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
