import Support
#if canImport(Glibc)
import Glibc
#endif

extension DiskCacheStore {
    /// What `prune` or `clear` did.
    public struct PruneReport: Sendable {
        /// Entries removed (broken ones included) and the bytes they took.
        public var removed = 0
        public var removedBytes: Int64 = 0
        /// What is left: entries, and bytes of every file the cache owns.
        public var remaining = 0
        public var remainingBytes: Int64 = 0
        public var sweep = SweepReport()
        /// Kept partial bodies removed, and the bytes they took.
        public var partials = 0
        public var partialBytes: Int64 = 0
        /// Entries kept because this process may not read them (`verify` names them).
        public var unreadable = 0
        public var failures: [DiskCacheError] = []

        /// Nothing done: a cache directory that does not exist.
        public init() {}
    }

    /// Evicts least recently used entries first (last use = the atime of
    /// the body, or of a bodiless entry's metadata; see `markAccessed`): every entry unused for longer than
    /// `maxAge` seconds, then more until the cache's files take at most
    /// `maxBytes`. Broken entries (which can only ever be misses) go first;
    /// entries this process may not read (`ScannedEntry.unreadable`) stay.
    /// Kept partial bodies count and go in the same order, their last write
    /// being their last use. Sweeps `.tmp` first; live temporary files count
    /// towards the size but are not touched. An entry used or rewritten
    /// meanwhile is kept.
    public func prune(maxBytes: Int64?, maxAge: Double?, now: Double? = nil) throws(DiskCacheError) -> PruneReport {
        var report = PruneReport()
        report.sweep = sweepTemporaryFiles(now: now)
        let now = now ?? currentUnixTime()
        let scan = try scan()
        report.start(scan)
        report.unreadable = scan.entries.count { $0.unreadable != nil }
        // Broken entries first (always removed), then least recently used. An entry this process may
        // not read is neither: nothing says it is broken, or when it was used (`verify` names it).
        let order = (scan.entries.filter { $0.unreadable == nil }.map(PruneCandidate.entry) + scan.partials.map(PruneCandidate.partial)).sorted {
            ($0.broken ? 0 : 1, $0.lastUse, $0.key) < ($1.broken ? 0 : 1, $1.lastUse, $1.key)
        }
        for candidate in order {
            let expired = maxAge.map { now - candidate.lastUse > $0 } ?? false
            // A limit of 0 empties the cache: a remembered error status takes no bytes, yet is an entry.
            let oversize = maxBytes.map { $0 <= 0 || report.remainingBytes > $0 } ?? false
            guard candidate.broken || expired || oversize else { break }   // sorted: nothing later is older
            switch candidate {
            case .entry(let scanned):
                report.evict(scanned) { () throws(DiskCacheError) -> Bool in
                    try remove(scanned.key, ifUnchangedSince: scanned.snapshot)
                }
            case .partial(let partial):
                guard removePartial(partial) else { continue }
                report.partials += 1
                report.partialBytes += partial.bytes
                report.remainingBytes -= partial.bytes
            }
        }
        return report
    }

    /// What `prune` may remove: an entry, or a kept partial body.
    private enum PruneCandidate {
        case entry(ScannedEntry)
        case partial(ScannedPartial)

        var broken: Bool { if case .entry(let scanned) = self { scanned.entry == nil } else { false } }
        var lastUse: Double {
            switch self {
            case .entry(let scanned): scanned.lastAccess
            case .partial(let partial): partial.lastWrite
            }
        }
        var key: String {
            switch self {
            case .entry(let scanned): scanned.key
            case .partial(let partial): partial.key
            }
        }
    }

    /// Removes every entry, every kept partial body and every leftover
    /// temporary file; files a live writer holds are kept (its entry appears
    /// when it commits), and foreign files are never touched.
    public func clear() throws(DiskCacheError) -> PruneReport {
        var report = PruneReport()
        report.sweep = sweepTemporaryFiles()
        report.partials = try removeAllPartials()
        let scan = try scan()
        report.start(scan)
        for scanned in scan.entries {
            report.evict(scanned) { () throws(DiskCacheError) -> Bool in
                try commitLock.withLock { () throws(DiskCacheError) -> Bool in try unlinkEntryFiles(scanned.key) }
            }
        }
        return report
    }
}

extension DiskCacheStore.PruneReport {
    /// Everything the scan found is left until something is removed.
    mutating func start(_ scan: DiskCacheStore.Scan) {
        remaining = scan.entries.count
        remainingBytes = scan.bytes
    }

    /// Runs `remove` for one entry and counts what it did (true: removed).
    mutating func evict(_ scanned: DiskCacheStore.ScannedEntry, _ remove: () throws(DiskCacheError) -> Bool) {
        do {
            guard try remove() else { return }
            removed += 1
            removedBytes += scanned.bytes
            remaining -= 1
            remainingBytes -= scanned.bytes
        } catch {
            failures.append(error)
        }
    }
}
