/// The transfers a `CurlLoop` runs: an array, each transfer knowing its place
/// in it (`CurlTransfer.activeSlot`), so that adding, removing and asking
/// "does it still run here?" hash nothing. A dictionary keyed by the transfer
/// cost ~0.5 k instructions per transfer on the loop thread (a hash and a
/// bucket walk per insert, lookup and removal; bench/history/cold.md
/// "Session 27 — loop20"). The order of `all` is not the order of starting:
/// a removal moves the last transfer into the freed place.
///
/// Threading: the loop thread only, as the transfers' `activeSlot`.
struct ActiveTransfers {
    /// Every running transfer, in no particular order.
    private(set) var all: [CurlTransfer] = []

    var isEmpty: Bool { all.isEmpty }

    /// Whether `transfer` runs here.
    func contains(_ transfer: CurlTransfer) -> Bool {
        let slot = transfer.activeSlot
        return slot >= 0 && slot < all.count && all[slot] === transfer
    }

    /// Adds a transfer that does not run here yet.
    mutating func insert(_ transfer: CurlTransfer) {
        transfer.activeSlot = all.count
        all.append(transfer)
    }

    /// Takes `transfer` out; false when it did not run here.
    @discardableResult
    mutating func remove(_ transfer: CurlTransfer) -> Bool {
        guard contains(transfer) else { return false }
        let slot = transfer.activeSlot
        let last = all.removeLast()
        if last !== transfer {
            all[slot] = last
            last.activeSlot = slot
        }
        transfer.activeSlot = -1
        return true
    }
}

@available(*, unavailable)
extension ActiveTransfers: Sendable {}
