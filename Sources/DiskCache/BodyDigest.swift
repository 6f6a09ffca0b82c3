#if canImport(Glibc)
import Glibc
#endif

/// The MD5 of a body as it streams into its temporary file.
///
/// The first `CacheDefaults.inlineDigestLimit` bytes (1 MiB) are hashed as
/// they are appended, on the writer's thread: a small body costs nothing
/// more. Past that, the digest follows the stream through the file instead:
/// whenever `CacheDefaults.digestStep` (1 MiB) of written bytes is not yet
/// hashed, a task reads that much back and hashes it, then hands on to a new
/// task if more is waiting (so no task holds a thread of the cooperative
/// pool for longer than one step). The fetch engine writes every body on its
/// one transfer thread, so hashing large bodies there made that thread the
/// bottleneck (MD5 runs at about 780 MB/s here, slower than loopback
/// delivers); this way the hashing of several large bodies spreads over the
/// cores while the transfer thread keeps receiving. Memory stays flat: one
/// read buffer per step. When the network is slower than MD5 the steps keep
/// up and `finish` has about a step left to hash; when it is faster, they
/// fall behind and `finish` hashes the rest.
///
/// Threading: `append`, `reset`, `finish` and `close` are called by the
/// writer's owner, one at a time. Steps run concurrently on the cooperative
/// pool. `digestLock` is held while the MD5 context or the file is used for
/// hashing (by a step, or by the owner inline and in `finish`); `stateLock`,
/// held only briefly, guards the counters. `hashed` only changes under both.
/// After `close` or `finish` no step touches the file again: the owner may
/// close it.
final class BodyDigest: @unchecked Sendable {
    private let md5: StreamingMD5
    private let fd: Int32
    private let path: String
    private let inlineLimit: Int64
    private let step: Int64
    private let digestLock = PthreadLock()
    private let stateLock = PthreadLock()
    // Guarded by stateLock.
    private var written: Int64 = 0
    private var hashed: Int64 = 0
    private var stepQueued = false
    private var closed = false
    /// A step could not read the file: no more steps; `finish` reads again and reports.
    private var stepFailed = false
    /// `close` or `finish` has returned: the owner may close the file.
    private var released = false
    /// Reads made by steps, and those made after `released` (none, by design).
    private var stepReads = 0
    private var readsAfterClose = 0

    /// `fd` must stay open, readable, until `close` or `finish` returns.
    init(fd: Int32, path: String, inlineLimit: Int64 = CacheDefaults.inlineDigestLimit,
         step: Int64 = CacheDefaults.digestStep) throws(DiskCacheError) {
        md5 = try StreamingMD5()
        self.fd = fd
        self.path = path
        self.inlineLimit = inlineLimit
        self.step = max(1, step)
    }

    /// Counts `bytes`, which the owner has just written to the end of the file.
    func append(_ bytes: UnsafeRawBufferPointer) {
        let count = Int64(bytes.count)
        guard count > 0 else { return }
        // Inline while everything so far is hashed and the body is still small:
        // no step has anything to do then (only the owner adds bytes).
        let inline = stateLock.withLock { hashed == written && written + count <= inlineLimit }
        if inline {
            digestLock.withLock {
                md5.update(bytes)
                stateLock.withLock {
                    written += count
                    hashed += count
                }
            }
            return
        }
        let schedule = stateLock.withLock { () -> Bool in
            written += count
            guard !stepQueued, !closed, !stepFailed, written - hashed >= step else { return false }
            stepQueued = true
            return true
        }
        if schedule {
            Task.detached { [self] in catchUp() }
        }
    }

    /// Starts over (a retried download): the owner truncates the file after this.
    func reset() {
        digestLock.withLock {
            md5.reset()
            stateLock.withLock {
                written = 0
                hashed = 0
            }
        }
    }

    /// Hashes what no step has hashed yet, and returns the hex MD5 of all the
    /// bytes appended since the start (or the last `reset`). No step runs after.
    func finish() throws(DiskCacheError) -> String {
        stateLock.withLock { closed = true }
        return try digestLock.withLock { () throws(DiskCacheError) -> String in
            let (start, end) = stateLock.withLock { (hashed, written) }
            var offset = start
            while offset < end {
                let n = try readAndHash(at: offset, upTo: end - offset)
                guard n > 0 else {
                    throw DiskCacheError(.io, path: path, message: "\(path) holds fewer bytes than were written to it")
                }
                offset += n
            }
            stateLock.withLock {
                hashed = end
                released = true
            }
            return md5.finalize()
        }
    }

    /// No step touches the file after this returns (a running one finishes its read first).
    func close() {
        stateLock.withLock { closed = true }
        digestLock.withLock { stateLock.withLock { released = true } }
    }

    /// A step: hashes up to `step` written bytes in order, then starts the
    /// next step if more is waiting (`stepQueued` stays set) or ends.
    private func catchUp() {
        let more = digestLock.withLock { () -> Bool in
            var done: Int64 = 0
            while true {
                let (start, available) = stateLock.withLock { () -> (Int64, Int64) in
                    if closed || written == hashed || done >= step {
                        if closed || written == hashed { stepQueued = false }
                        return (0, 0)
                    }
                    return (hashed, written - hashed)
                }
                guard available > 0 else { return stateLock.withLock { stepQueued } }
                // A read error or a short file: leave the rest to `finish`, which reports it.
                guard let n = try? readAndHash(at: start, upTo: min(available, step - done), byStep: true), n > 0 else {
                    stateLock.withLock {
                        stepQueued = false
                        stepFailed = true
                    }
                    return false
                }
                done += n
                stateLock.withLock {
                    hashed += n
                    stepReads += 1
                }
            }
        }
        if more {
            Task.detached { [self] in catchUp() }
        }
    }

    /// For tests: bytes hashed so far, reads made by steps, and reads a step
    /// made after `close` or `finish` returned.
    var progress: (hashed: Int64, stepReads: Int, readsAfterClose: Int) {
        stateLock.withLock { (hashed, stepReads, readsAfterClose) }
    }

    /// One read of up to `readChunk` bytes at `offset` (at most `limit`), into
    /// the digest. Call with `digestLock` held. 0 at the end of the file.
    private func readAndHash(at offset: Int64, upTo limit: Int64, byStep: Bool = false) throws(DiskCacheError) -> Int64 {
        let want = Int(min(limit, Int64(CacheDefaults.digestReadChunk)))
        return try withUnsafeTemporaryAllocation(byteCount: want, alignment: 16) { buffer throws(DiskCacheError) -> Int64 in
            guard let base = buffer.baseAddress else { return 0 }
            if byStep { stateLock.withLock { if released { readsAfterClose += 1 } } }
            while true {
                let n = pread(fd, base, want, off_t(offset))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw DiskCacheError.system("cannot read back", path: path)
                }
                md5.update(UnsafeRawBufferPointer(start: base, count: n))
                return Int64(n)
            }
        }
    }
}
