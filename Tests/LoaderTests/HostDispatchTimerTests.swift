import Support
import Testing
@testable import Loader

/// When a batch arms its timer for a paused host (`HostDispatch.timerToArm`):
/// the timer is the only thing that ends a pause at the end of a batch, when
/// no other host's event comes to step the scheduler.
@Suite struct HostDispatchTimerTests {
    /// A pause end that is already past when the timer is decided is armed
    /// (it fires at once). Before, it was skipped: the step had found the host
    /// still paused by its own earlier reading of the clock, so no one ended the
    /// pause, and the host's URLs never started (a batch hung at its end).
    @Test func aPauseEndAlreadyPastIsArmed() {
        let past = monotonicSeconds() - 0.001
        #expect(HostDispatch.timerToArm(nextWake: past, armed: nil, cancelled: false) == past)
        let future = monotonicSeconds() + 1
        #expect(HostDispatch.timerToArm(nextWake: future, armed: nil, cancelled: false) == future)
    }

    @Test func aLaterOrEqualPauseEndKeepsTheArmedTimer() {
        #expect(HostDispatch.timerToArm(nextWake: 100, armed: 50, cancelled: false) == nil)
        #expect(HostDispatch.timerToArm(nextWake: 100, armed: 100, cancelled: false) == nil)
        #expect(HostDispatch.timerToArm(nextWake: 40, armed: 50, cancelled: false) == 40)
    }

    @Test func noTimerWithoutAPauseOrOnceCancelled() {
        #expect(HostDispatch.timerToArm(nextWake: nil, armed: nil, cancelled: false) == nil)
        #expect(HostDispatch.timerToArm(nextWake: 100, armed: nil, cancelled: true) == nil)
    }
}
