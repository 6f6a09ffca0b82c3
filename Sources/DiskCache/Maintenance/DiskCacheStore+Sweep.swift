import Support
#if canImport(Glibc)
import Glibc
#endif

extension DiskCacheStore {
    /// What a sweep of `DIR/.tmp` did.
    public struct SweepReport: Sendable {
        /// Leftovers of dead writers that were removed, and their size.
        public var removed = 0
        public var removedBytes: Int64 = 0
        /// Temporary files left alone: a live writer holds them, or they are
        /// too young to judge.
        public var kept = 0
        /// Files that should have gone but could not be removed.
        public var failures: [DiskCacheError] = []

        public init() {}
    }

    /// Removes leftovers of killed runs from `DIR/.tmp` without disturbing a
    /// live writer, in this process or another. Only names the cache writes
    /// (`<key>.<pid>.<n>[.meta]`) are considered. A file goes when nobody
    /// holds its `flock` (every writer holds one until it publishes or
    /// discards the file, and the kernel drops it when the writer dies, even
    /// by SIGKILL) and either its pid is dead or it has not changed for
    /// `CacheDefaults.unlockedTemporaryGrace`. Where locks are unsupported,
    /// a dead pid plus that grace, or `CacheDefaults.abandonedTemporaryAge`,
    /// decides.
    ///
    /// Cheap when there is nothing to do: one `opendir`/`readdir`. The
    /// command line runs it when a run that may use the network opens the
    /// cache, and in `cache verify`, `prune` and `clear`.
    @discardableResult
    public func sweepTemporaryFiles(now: Double? = nil) -> SweepReport {
        var report = SweepReport()
        let names: [String]
        do {
            guard let listed = try DirectoryListing.names(in: temporaryDirectory) else { return report }
            names = listed
        } catch {
            report.failures.append(error)
            return report
        }
        let now = now ?? currentUnixTime()
        for name in names {
            guard let temporary = TemporaryFileName(name) else { continue }   // not ours: never touched
            let path = temporaryDirectory + "/" + name
            switch sweepDecision(path: path, pid: temporary.pid, now: now) {
            case .gone:
                continue
            case .keep:
                report.kept += 1
            case .remove(let bytes, let fd):
                if unlink(path) == 0 || errno == ENOENT {
                    report.removed += 1
                    report.removedBytes += bytes
                } else {
                    report.failures.append(DiskCacheError.system("cannot remove", path: path))
                }
                if fd >= 0 { _ = close(fd) }   // releases the lock taken to decide
            }
        }
        return report
    }

    private enum SweepDecision {
        case gone
        case keep
        /// Remove; `fd` (if not -1) holds the file's lock until then.
        case remove(bytes: Int64, fd: Int32)
    }

    private func sweepDecision(path: String, pid: Int32, now: Double) -> SweepDecision {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        var info = stat()
        if fd < 0 {
            // Cannot open it to look at its lock (permissions): judge by pid and age.
            guard errno != ENOENT else { return .gone }
            guard lstat(path, &info) == 0 else { return .gone }
            guard (info.st_mode & S_IFMT) == S_IFREG else { return .keep }   // a symlink or the like: not ours
            return unlockedLeftover(info, pid: pid, now: now, locksWork: false) ? .remove(bytes: Int64(info.st_size), fd: -1) : .keep
        }
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            _ = close(fd)
            return .keep
        }
        var locksWork = true
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EWOULDBLOCK {
                _ = close(fd)
                return .keep   // a live writer holds it
            }
            locksWork = false
        }
        guard unlockedLeftover(info, pid: pid, now: now, locksWork: locksWork) else {
            _ = close(fd)
            return .keep
        }
        return .remove(bytes: Int64(info.st_size), fd: fd)
    }

    /// For a file nobody holds a lock on (or where locks do not work): is
    /// its writer gone?
    private func unlockedLeftover(_ info: stat, pid: Int32, now: Double, locksWork: Bool) -> Bool {
        let age = now - seconds(info.st_mtim)
        let pidDead = pid != Self.processID && kill(pid, 0) != 0 && errno == ESRCH
        if locksWork { return pidDead || age > CacheDefaults.unlockedTemporaryGrace }
        return (pidDead && age > CacheDefaults.unlockedTemporaryGrace) || age > CacheDefaults.abandonedTemporaryAge
    }
}
