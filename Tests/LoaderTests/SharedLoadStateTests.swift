@testable import Loader
import Testing

/// The rules of request coalescing, without tasks: waiters are plain names,
/// and each test checks who is answered with what, and when the load is cancelled.
@Suite struct SharedLoadStateTests {
    typealias Machine = SharedLoadState<String>
    static let result = Phase.failure(LoadError(kind: .http, message: "HTTP 503", status: 503))

    /// What an action answers: each waiter with the name of its phase's error kind, or "result".
    static func answers(_ action: Machine.Action) -> [String: String] {
        func text(_ phase: Phase) -> String {
            if case .failure(let error) = phase { return error.kind == .cancelled ? "cancelled" : "result" }
            return "other"
        }
        switch action {
        case .nothing: return [:]
        case .resume(let waiter, let phase): return [waiter: text(phase)]
        case .resumeAll(let waiters, let phase): return Dictionary(uniqueKeysWithValues: waiters.map { ($0, text(phase)) })
        case .cancelLoad(let waiter): return waiter.map { [$0: "cancelled"] } ?? [:]
        }
    }

    static func cancelsLoad(_ action: Machine.Action) -> Bool {
        if case .cancelLoad = action { return true }
        return false
    }

    /// A load with two tickets, both waiting: the creator's ("first") and a second one ("second").
    static func twoWaiting() throws -> (Machine, second: UInt64) {
        var machine = Machine()
        let ticket = machine.join()
        let second = try #require(ticket)
        #expect(second != Machine.firstWaiter)
        #expect(Self.answers(machine.wait(Machine.firstWaiter, "first")).isEmpty)
        #expect(Self.answers(machine.wait(second, "second")).isEmpty)
        return (machine, second)
    }

    @Test func everyWaiterGetsTheResultOnce() throws {
        let (start, second) = try Self.twoWaiting()
        var machine = start
        let (action, sharers) = machine.complete(Self.result)
        #expect(Self.answers(action) == ["first": "result", "second": "result"])
        #expect(sharers == 2)
        // Nothing is answered twice: a late leave does nothing, nobody drains.
        #expect(Self.answers(machine.leave(second)).isEmpty)
        #expect(!machine.mustDrain(Machine.firstWaiter) && !machine.mustDrain(second))
    }

    @Test func aTicketNotYetWaitingGetsTheResultWhenItWaits() throws {
        var machine = Machine()
        let lateTicket = machine.join()
        let late = try #require(lateTicket)
        _ = machine.wait(Machine.firstWaiter, "first")
        let (action, sharers) = machine.complete(Self.result)
        #expect(Self.answers(action) == ["first": "result"])
        #expect(sharers == 2)   // the late one delivers the body too
        #expect(Self.answers(machine.wait(late, "late")) == ["late": "result"])
        // A ticket answered once is not answered with the result again.
        #expect(Self.answers(machine.wait(late, "again")) == ["again": "cancelled"])
        // A finished load is not joined: the caller starts a new one.
        #expect(machine.join() == nil)
    }

    @Test func oneLeavingDoesNotCancelTheOthers() throws {
        let (start, _) = try Self.twoWaiting()
        var machine = start
        let leave = machine.leave(Machine.firstWaiter)
        #expect(Self.answers(leave) == ["first": "cancelled"])
        #expect(!Self.cancelsLoad(leave))
        let (action, sharers) = machine.complete(Self.result)
        #expect(Self.answers(action) == ["second": "result"])
        #expect(sharers == 1)
    }

    @Test func aCancelBeforeWaitingIsAnsweredByWait() throws {
        var machine = Machine()
        let secondTicket = machine.join()
        let second = try #require(secondTicket)
        _ = machine.wait(Machine.firstWaiter, "first")
        #expect(Self.answers(machine.leave(second)).isEmpty)   // not waiting yet: nothing to resume
        #expect(Self.answers(machine.wait(second, "second")) == ["second": "cancelled"])
        let (action, _) = machine.complete(Self.result)
        #expect(Self.answers(action) == ["first": "result"])
    }

    @Test func theLastToLeaveCancelsTheLoadAndDrainsIt() throws {
        let (start, second) = try Self.twoWaiting()
        var machine = start
        #expect(!Self.cancelsLoad(machine.leave(second)))
        let last = machine.leave(Machine.firstWaiter)
        #expect(Self.cancelsLoad(last))
        #expect(Self.answers(last) == ["first": "cancelled"])
        // An abandoned load is never joined; only the last one waits for its cleanup.
        #expect(machine.join() == nil)
        #expect(machine.mustDrain(Machine.firstWaiter) && !machine.mustDrain(second))
        let (action, sharers) = machine.complete(Self.result)
        #expect(Self.answers(action).isEmpty)
        #expect(sharers == 0)   // a transient body is removed at once
        #expect(machine.mustDrain(Machine.firstWaiter))
    }

    @Test func theOnlyWaiterCancellingBeforeItWaitsStillCancelsTheLoad() {
        var machine = Machine()
        let leave = machine.leave(Machine.firstWaiter)
        #expect(Self.cancelsLoad(leave) && Self.answers(leave).isEmpty)
        #expect(Self.answers(machine.wait(Machine.firstWaiter, "first")) == ["first": "cancelled"])
        #expect(machine.mustDrain(Machine.firstWaiter))
    }
}
