@testable import Fetch
import Testing

/// A loop's table of running transfers alone (no transfer is started): every
/// insertion and removal keeps each transfer's place right, in any order.
@Suite struct ActiveTransfersTests {
    final class NullSink: BodySink, @unchecked Sendable {
        func write(_ bytes: UnsafeRawBufferPointer) throws {}
        func reset() throws {}
    }

    static func transfers(_ count: Int, loops: TransferLoops) -> [CurlTransfer] {
        (0..<count).map { index in
            CurlTransfer(spec: TransferSpec(url: "http://127.0.0.1:1/\(index).png", headerLines: [], maxSize: 1 << 20,
                                            maxRedirects: 0, sink: NullSink()),
                         loops: loops)
        }
    }

    @Test func removalsInAnyOrderLeaveTheOthersFindable() {
        let loops = TransferLoops(configuration: FetchConfiguration())
        // Every order of taking 5 transfers out, after all were put in (120 orders).
        func orders(_ rest: [Int]) -> [[Int]] {
            rest.isEmpty ? [[]] : rest.flatMap { first in orders(rest.filter { $0 != first }).map { [first] + $0 } }
        }
        for order in orders(Array(0..<5)) {
            let made = Self.transfers(5, loops: loops)
            var active = ActiveTransfers()
            for transfer in made { active.insert(transfer) }
            var left = Set(0..<5)
            for index in order {
                let removed = active.remove(made[index])
                let again = active.remove(made[index])
                #expect(removed && !again, "removed, once")
                left.remove(index)
                #expect(Set(active.all.map(ObjectIdentifier.init)) == Set(left.map { ObjectIdentifier(made[$0]) }))
                for other in 0..<5 { #expect(active.contains(made[other]) == left.contains(other), "order \(order)") }
            }
            #expect(active.isEmpty)
            #expect(made.allSatisfy { $0.activeSlot == -1 })
        }
    }

    @Test func aTransferTakenOutCanRunAgainAndAnotherTablesTransferIsNotThere() {
        let loops = TransferLoops(configuration: FetchConfiguration())
        let made = Self.transfers(3, loops: loops)
        var active = ActiveTransfers()
        var other = ActiveTransfers()
        active.insert(made[0])
        active.insert(made[1])
        other.insert(made[2])   // slot 0 in its own table
        let stranger = active.remove(made[2])
        #expect(!active.contains(made[2]) && !stranger)
        #expect(other.contains(made[2]))
        let removed = active.remove(made[0])
        #expect(removed)
        active.insert(made[0])
        #expect(active.contains(made[0]) && active.contains(made[1]) && active.all.count == 2)
    }
}
