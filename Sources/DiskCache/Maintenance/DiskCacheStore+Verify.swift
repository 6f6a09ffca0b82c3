#if canImport(Glibc)
import Glibc
#endif

extension DiskCacheStore {
    /// What `verify` found and did.
    public struct VerifyReport: Sendable {
        public struct Removal: Sendable {
            public let key: String
            /// The URL from the metadata, when it could be read.
            public let url: String?
            public let reason: String
            public let bytes: Int64
        }
        /// Keys examined, and how many were intact (digest included).
        public var checked = 0
        public var intact = 0
        /// Corrupt, partial or foreign entries that were removed.
        public var removed: [Removal] = []
        /// Entries a writer changed while they were being checked (left alone).
        public var changed = 0
        /// Outdated sidecars removed beside intact entries.
        public var straySidecars = 0
        /// Files named like a key without any metadata, left alone: not the
        /// cache's own (`Scan.unowned`).
        public var unowned: [String] = []
        public var sweep = SweepReport()
        /// Entries that should have been removed but could not be.
        public var failures: [DiskCacheError] = []
        /// Entries whose files this process may not read (a mode-000 file):
        /// not judged, so not removed; named so that their owner can look.
        public var unreadable: [Removal] = []

        /// Nothing checked: a cache directory that does not exist.
        public init() {}
    }

    /// Checks every entry — metadata complete and ours and naming its key,
    /// body present with the recorded size and mtime (and inode, for a
    /// sidecar), and the body reread against the recorded length and digest
    /// (XXH3-128, or MD5 for entries of the previous format) — and removes
    /// those that fail, and outdated sidecars beside intact entries. Sweeps `.tmp` first.
    /// A file named like a key without any metadata is not the cache's: it
    /// is named in `unowned` and left alone. An entry that a writer
    /// replaces while it is being checked is left alone (the writer's
    /// commit is complete and consistent). Throws only when the directory
    /// cannot be listed.
    /// `bodyCheck`, when given, is asked about every entry whose body is
    /// intact (`cache verify --decode`: the decoder's word); a non-nil
    /// answer is the reason the entry is removed.
    public func verify(bodyCheck: ((CacheEntry) -> String?)? = nil) throws(DiskCacheError) -> VerifyReport {
        var report = VerifyReport()
        report.sweep = sweepTemporaryFiles()
        let scan = try scan()
        report.unowned = scan.unowned
        for scanned in scan.entries {
            report.checked += 1
            var problem = scanned.problem
            if let denied = scanned.unreadable {
                report.unreadable.append(.init(key: scanned.key, url: scanned.url, reason: denied, bytes: scanned.bytes))
                continue
            }
            if let entry = scanned.entry {
                if let denied = unreadable(scanned.key, snapshot: scanned.snapshot) {
                    // A sidecar's record was read, its body may not be: it cannot be checked either.
                    report.unreadable.append(.init(key: scanned.key, url: scanned.url, reason: denied, bytes: scanned.bytes))
                    continue
                }
                problem = deepCheck(entry)
                if problem == nil, let bodyCheck { problem = keepingLastUse(of: entry.key) { bodyCheck(entry) } }
            }
            guard let problem else {
                report.intact += 1
                if scanned.straySidecar {
                    do {
                        if try removeStraySidecar(scanned.key, snapshot: scanned.snapshot) { report.straySidecars += 1 }
                    } catch {
                        report.failures.append(error)
                    }
                }
                continue
            }
            do {
                if try remove(scanned.key, ifUnchangedSince: scanned.snapshot) {
                    report.removed.append(.init(key: scanned.key, url: scanned.url,
                                                reason: problem, bytes: scanned.bytes))
                } else {
                    report.changed += 1
                }
            } catch {
                report.failures.append(error)
            }
        }
        return report
    }

    /// Runs `read`, a reader the cache does not own (libvips, for `verify
    /// --decode`: it opens the body by name, without `O_NOATIME`), then puts
    /// the body's access time back if the read moved it: the cache's own
    /// reads never move the last use (SPEC §4), or one `verify --decode`
    /// would make every entry look just used to `prune`. (A use by another
    /// process during the read is undone with it: LRU order is advice.)
    private func keepingLastUse<Answer>(of key: String, _ read: () -> Answer) -> Answer {
        var before = stat()
        guard fstatat(directoryFD, key, &before, AT_SYMLINK_NOFOLLOW) == 0 else { return read() }
        let answer = read()
        var after = stat()
        guard fstatat(directoryFD, key, &after, AT_SYMLINK_NOFOLLOW) == 0, after.st_ino == before.st_ino,
              after.st_atim.tv_sec != before.st_atim.tv_sec || after.st_atim.tv_nsec != before.st_atim.tv_nsec
        else { return answer }
        var times = (before.st_atim, timespec(tv_sec: 0, tv_nsec: Self.utimeOmit))   // the mtime stays
        _ = withUnsafePointer(to: &times) { pair in   // best effort: LRU order is advice
            pair.withMemoryRebound(to: timespec.self, capacity: 2) { utimensat(directoryFD, key, $0, AT_SYMLINK_NOFOLLOW) }
        }
        return answer
    }

    /// What is wrong with an entry whose files look intact, or nil.
    private func deepCheck(_ entry: CacheEntry) -> String? {
        let meta = entry.metadata
        guard meta.hasBody else { return nil }
        let read: FileDigest.Result
        do {
            read = try FileDigest.digest(path: entry.bodyPath, meta.digestAlgorithm)
        } catch {
            return "an unreadable body (\(error.message))"
        }
        if read.inode != entry.inode || read.mtimeNs != meta.bodyMtimeNs {
            return nil   // replaced since the scan: the removal's snapshot check leaves it alone either way
        }
        if read.length != meta.bodyLength {
            return "a body of \(read.length) bytes where the metadata says \(meta.bodyLength)"
        }
        if read.digest != meta.bodyDigest {
            return "a body whose \(meta.digestAlgorithm.rawValue) \(read.digest) is not the recorded \(meta.bodyDigest)"
        }
        return nil
    }
}
