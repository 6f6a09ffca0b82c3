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
        public var failures: [DiskCacheError] = []
    }

    /// Evicts least recently used entries first (last use = the metadata's
    /// atime, see `markAccessed`): every entry unused for longer than
    /// `maxAge` seconds, then more until the cache's files take at most
    /// `maxBytes`. Broken entries (which can only ever be misses) go first.
    /// Sweeps `.tmp` first; live temporary files count towards the size but
    /// are not touched. An entry used or rewritten meanwhile is kept.
    public func prune(maxBytes: Int64?, maxAge: Double?, now: Double? = nil) throws(DiskCacheError) -> PruneReport {
        var report = PruneReport()
        report.sweep = sweepTemporaryFiles(now: now)
        let now = now ?? currentTime()
        let scan = try scan()
        var total = scan.bytes
        var remaining = scan.entries.count
        // Broken entries first (always removed), then least recently used.
        let order = scan.entries.sorted {
            ($0.entry == nil ? 0 : 1, $0.lastAccess, $0.key) < ($1.entry == nil ? 0 : 1, $1.lastAccess, $1.key)
        }
        for scanned in order {
            let broken = scanned.entry == nil
            let expired = maxAge.map { now - scanned.lastAccess > $0 } ?? false
            let oversize = maxBytes.map { total > $0 } ?? false
            guard broken || expired || oversize else { break }   // sorted: nothing later is older
            do {
                if try remove(scanned.key, ifUnchangedSince: scanned.snapshot) {
                    report.removed += 1
                    report.removedBytes += scanned.bytes
                    total -= scanned.bytes
                    remaining -= 1
                }
            } catch {
                report.failures.append(error)
            }
        }
        report.remaining = remaining
        report.remainingBytes = total
        return report
    }

    /// Removes every entry and every leftover temporary file; files a live
    /// writer holds are kept (its entry appears when it commits), and
    /// foreign files are never touched.
    public func clear() throws(DiskCacheError) -> PruneReport {
        var report = PruneReport()
        report.sweep = sweepTemporaryFiles()
        let scan = try scan()
        var total = scan.bytes
        var remaining = scan.entries.count
        for scanned in scan.entries {
            do {
                let removed = try commitLock.withLock { () throws(DiskCacheError) -> Bool in try unlinkEntryFiles(scanned.key) }
                if removed {
                    report.removed += 1
                    report.removedBytes += scanned.bytes
                    total -= scanned.bytes
                    remaining -= 1
                }
            } catch {
                report.failures.append(error)
            }
        }
        report.remaining = remaining
        report.remainingBytes = total
        return report
    }
}
