import DiskCache

/// The identities a batch has taken up (16 bytes per distinct URL), in less
/// memory than a `Set<MD5.Digest>` and without its doubling spikes.
///
/// A `Set` keeps between 0.375 and 0.75 of its buckets full and doubles in
/// one step, the old table alive while the new one fills: at 100,000 URLs it
/// held 4 MiB and briefly 6 MiB, the largest block of a cold run (peak RSS,
/// issue 22's ≤ 30 MB). Here the digests sit in `shardCount` open-addressing
/// tables (linear probing, `nil`-free: one digest value marks an empty slot,
/// and that digest itself, if ever inserted, is a flag), each at most
/// `maxLoad` full and grown by half when it is: about 24 bytes per URL, and
/// a growth copies one shard's table, not the whole set. Exact: nothing is
/// ever taken for a duplicate that is not one.
struct DigestSet {
    /// Shards, chosen by a digest's hash; each grows on its own.
    static let shardCount = 256
    /// Slots in a shard's first table.
    static let firstCapacity = 16
    /// Fullest a table gets before it grows (as a fraction: `maxLoadNumerator` / 8).
    static let maxLoadNumerator = 6

    private struct Shard {
        var slots: [MD5.Digest] = []
        var count = 0
    }

    /// Marks an empty slot: the MD5 of the empty string (no URL's key is
    /// empty; `containsEmpty` keeps the set exact all the same).
    private let empty = MD5.digest("")
    /// Mixed into every digest's hash (`MD5.Digest._rawHashValue`), so that
    /// where a digest lands is not known outside this process.
    private let seed = Int.random(in: .min ... .max)
    private var containsEmpty = false
    private var shards = [Shard](repeating: Shard(), count: DigestSet.shardCount)
    private(set) var count = 0

    func contains(_ digest: MD5.Digest) -> Bool {
        if digest == empty { return containsEmpty }
        let hash = hash(digest)
        let shard = shards[Self.shard(hash)]
        guard !shard.slots.isEmpty else { return false }
        var index = Self.slot(hash, capacity: shard.slots.count)
        while true {
            let slot = shard.slots[index]
            if slot == digest { return true }
            if slot == empty { return false }
            index = index + 1 == shard.slots.count ? 0 : index + 1
        }
    }

    /// Adds `digest`; false when it was there already.
    @discardableResult
    mutating func insert(_ digest: MD5.Digest) -> Bool {
        if digest == empty {
            defer { containsEmpty = true }
            if containsEmpty { return false }
            count += 1
            return true
        }
        let hash = hash(digest)
        let inserted = Self.insert(digest, hash: hash, into: &shards[Self.shard(hash)], empty: empty, seed: seed)
        if inserted { count += 1 }
        return inserted
    }

    private func hash(_ digest: MD5.Digest) -> UInt64 {
        UInt64(UInt(bitPattern: digest._rawHashValue(seed: seed)))
    }

    private static func insert(_ digest: MD5.Digest, hash: UInt64, into shard: inout Shard, empty: MD5.Digest,
                               seed: Int) -> Bool {
        if (shard.count + 1) * 8 > shard.slots.count * maxLoadNumerator {
            grow(&shard, empty: empty, seed: seed)
        }
        var index = slot(hash, capacity: shard.slots.count)
        while true {
            let slot = shard.slots[index]
            if slot == digest { return false }
            if slot == empty {
                shard.slots[index] = digest
                shard.count += 1
                return true
            }
            index = index + 1 == shard.slots.count ? 0 : index + 1
        }
    }

    /// A table half as large again, every digest placed anew.
    private static func grow(_ shard: inout Shard, empty: MD5.Digest, seed: Int) {
        let capacity = max(firstCapacity, shard.slots.count + shard.slots.count / 2)
        var slots = [MD5.Digest](repeating: empty, count: capacity)
        for digest in shard.slots where digest != empty {
            var index = slot(UInt64(UInt(bitPattern: digest._rawHashValue(seed: seed))), capacity: capacity)
            while slots[index] != empty { index = index + 1 == capacity ? 0 : index + 1 }
            slots[index] = digest
        }
        shard.slots = slots
    }

    /// The shard: the hash's top bits.
    private static func shard(_ hash: UInt64) -> Int { Int(hash >> 56) % shardCount }

    /// The first slot to probe: the hash's low 56 bits scaled to `capacity`.
    private static func slot(_ hash: UInt64, capacity: Int) -> Int {
        Int((hash << 8).multipliedFullWidth(by: UInt64(capacity)).high)
    }
}
