import Support
#if canImport(Glibc)
import Glibc
#endif

/// The transfer loops of one `FetchClient`, and which one runs each transfer.
///
/// A client has `FetchConfiguration.transferLoops` loops (one per core by
/// default), each a `CurlLoop`: a thread with its own multi handle, easy
/// handles, connection cache and `CurlShare`; a loop starts when a transfer
/// is first placed on it. A connection lives in one loop's cache, so where a
/// transfer goes decides whether it finds a warm connection: every transfer
/// to one host and port goes to that host's home loop (a hash
/// of "host:port"), as SPEC §6 says: a host stays on one loop. Its
/// connections are then all in one cache, where its next transfer finds
/// them; over https, HTTP/2 multiplexes its transfers on one connection
/// (which can only be shared inside one multi handle) and the loop's share
/// resumes its TLS sessions. Many hosts spread over the loops; one busy
/// host keeps one loop busy (plain http could spread one host's transfers
/// over the loops, each keeping its own warm connections, but the contract
/// keeps a host on one loop; bench/README says what that costs).
///
/// `FetchConfiguration.maxConcurrentTransfers` bounds the whole client: a
/// transfer takes one of its slots before it is handed to its loop, and
/// beyond the limit waits here, in order, until any loop finishes one. With
/// a limit, a transfer is placed when it gets its slot.
/// The connection cache (CURLMOPT_MAXCONNECTS: `connectionCache`) and the
/// pool of idle easy handles are divided between the loops, at least 8
/// each. The per-host connection limit (CURLMOPT_MAX_HOST_CONNECTIONS) is
/// each loop's whole: a host has only its home loop.
///
/// Threading: any thread may call `makeTransfer`, `submit` and `cancel`;
/// `finished` is called from `CurlTransfer.finish`, on whichever thread
/// answers the transfer. Nothing here is called with a loop's lock held, and
/// no loop is called with this one held.
final class TransferLoops: Sendable {
    private struct State {
        /// The loops by index; nil until a transfer is first placed there.
        var loops: [CurlLoop?]
        /// Made with the first loop and shared by all (see `CertificateStore`).
        var certificates: CertificateStore?
        /// Transfers holding one of the `slotLimit` slots.
        var slotsInUse = 0
        /// Submitted transfers waiting for a slot, oldest first.
        var waiting = FIFO<CurlTransfer>()
        var stopping = false
    }

    private let state: Locked<State>
    private let configuration: FetchConfiguration
    let count: Int
    /// The threads that take finished transfers' file work off the loops
    /// (`FetchClient.start`), and the writes of the large bodies it streams.
    let workers: CompletionWorkers
    /// `maxConcurrentTransfers`, at least 1; nil: no limit.
    private let slotLimit: Int?
    private let connectionCachePerLoop: Int

    init(configuration: FetchConfiguration) {
        self.configuration = configuration
        count = min(Defaults.maxTransferLoops, max(1, configuration.transferLoops))
        workers = CompletionWorkers(count: configuration.completionWorkers)
        slotLimit = configuration.maxConcurrentTransfers.map { max(1, $0) }
        let cache = Self.connectionCache(maxConnections: configuration.maxConnections, openFiles: Self.openFileLimit())
        connectionCachePerLoop = max(8, (cache + count - 1) / count)
        state = Locked(State(loops: Array(repeating: nil, count: count)))
    }

    /// Connections the client's caches keep, over all loops: twice
    /// `maxConnections` (every transfer finds its own), or
    /// `Defaults.idleConnections` (about one per host a batch works on) when
    /// that is more and a quarter of the open-file limit allows it.
    static func connectionCache(maxConnections: Int, openFiles: Int) -> Int {
        max(8, min(maxConnections, Int.max / 4) * 2, min(Defaults.idleConnections, openFiles / 4))   // `--jobs` may be any Int
    }

    /// The process's open-file limit (soft), or 1,024 when it cannot be read.
    private static func openFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return Int(clamping: min(limit.rlim_cur, rlim_t(Int.max / 8)))   // RLIM_INFINITY is the largest value
    }

    /// A transfer for `spec`. The caller sets its completion and hands it
    /// to `submit`, always: its placement is counted until it finishes.
    /// Without a slot limit it is placed on its loop here (started if need
    /// be); with one, when it is granted a slot, among loops all started here.
    func makeTransfer(_ spec: consuming TransferSpec) throws(FetchError) -> CurlTransfer {
        if case .failure(let error) = CurlGlobal.initialised { throw error }   // before any libcurl call (it is loaded then)
        let transfer = CurlTransfer(spec: spec, loops: self)
        let failure = state.withLock { state -> FetchError? in
            guard !state.stopping else { return FetchError(.cancelled, url: transfer.spec.url) }
            if slotLimit == nil {
                switch place(transfer, in: &state) {
                case .success(let loop): transfer.place(on: loop)
                case .failure(let error): return error
                }
            } else {
                for index in 0..<count where state.loops[index] == nil {
                    if case .failure(let error) = loop(index, in: &state) { return error }
                }
            }
            return nil
        }
        if let failure { throw failure }
        return transfer
    }

    /// Hands `transfer` to its loop, or queues it while `slotLimit` transfers run.
    func submit(_ transfer: CurlTransfer) {
        if let slotLimit {
            enum Verdict { case start, queued, refused(FetchError) }
            let verdict = state.withLock { state -> Verdict in
                // A cancel that came first has set the flag before it looked in `waiting`.
                if state.stopping || transfer.cancelRequested.load(ordering: .acquiring) {
                    return .refused(FetchError(.cancelled, url: transfer.spec.url))
                }
                if state.slotsInUse < slotLimit {
                    return grant(transfer, in: &state).map { .refused($0) } ?? .start
                }
                state.waiting.append(transfer)
                return .queued
            }
            switch verdict {
            case .start: break
            case .queued: return
            case .refused(let error):
                transfer.finish(.failure(error))   // not placed: holds no slot
                return
            }
        }
        transfer.loop?.submit(transfer)
    }

    /// Aborts `transfer`: at once if it waits for a slot, else through its
    /// loop. Safe before, during or after `submit` (see `CurlLoop.cancel`).
    func cancel(_ transfer: CurlTransfer) {
        transfer.cancelRequested.store(true, ordering: .releasing)
        guard slotLimit != nil else {
            transfer.loop?.cancel(transfer)   // placed when made
            return
        }
        enum Found { case waiting, placed(CurlLoop), notYetSubmitted }
        let found = state.withLock { state -> Found in
            if state.waiting.remove(firstWhere: { $0 === transfer }) != nil { return .waiting }
            return transfer.loop.map { .placed($0) } ?? .notYetSubmitted
        }
        switch found {
        case .waiting: transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url)))
        case .placed(let loop): loop.cancel(transfer)
        case .notYetSubmitted: break   // `submit` will see the flag
        }
    }

    /// Ends, failing each with `kind` and `detail`, the running transfers to
    /// `url`'s host that have received no byte of a response yet
    /// (`CurlLoop.endUnanswered`), on every loop: a host's spellings
    /// ("Img.example.com:443") may hash to different home loops. Transfers
    /// waiting here for a slot are left to start (their gate may refuse
    /// them at their loop: `FetchAttemptGate.refusal`).
    func endUnanswered(toHostOf url: String, kind: FetchError.Kind, detail: String) {
        guard let host = Self.hostIdentity(of: url) else { return }
        let loops = state.withLock { $0.loops.compactMap { $0 } }
        for loop in loops { loop.endUnanswered(host: host, kind: kind, detail: detail) }
    }

    /// Gives back the slot of a transfer that has its answer: it goes to the
    /// oldest waiting transfer.
    func finished(_ transfer: CurlTransfer) {
        guard transfer.loop != nil, let slotLimit else { return }
        var refused: [(CurlTransfer, FetchError)] = []
        let next = state.withLock { state -> CurlTransfer? in
            state.slotsInUse -= 1
            while !state.stopping, state.slotsInUse < slotLimit, let next = state.waiting.popFirst() {
                guard let error = grant(next, in: &state) else { return next }
                refused.append((next, error))
            }
            return nil
        }
        for (transfer, error) in refused { transfer.finish(.failure(error)) }
        if let next { next.loop?.submit(next) }
    }

    /// Places `transfer` and takes a slot for it; the error when it cannot be
    /// placed (only if a loop cannot start, and `makeTransfer` started them all).
    private func grant(_ transfer: CurlTransfer, in state: inout State) -> FetchError? {
        switch place(transfer, in: &state) {
        case .success(let loop):
            transfer.place(on: loop)
            state.slotsInUse += 1
            return nil
        case .failure(let error):
            return error
        }
    }

    /// The home loop of the transfer's host (see the type's comment), started if need be.
    private func place(_ transfer: CurlTransfer, in state: inout State) -> Result<CurlLoop, FetchError> {
        let home = count == 1 ? 0 : transfer.origin.homeHash.map { Int($0 % UInt64(count)) } ?? 0
        return loop(home, in: &state)
    }

    /// Loop `index`, started if it was not.
    private func loop(_ index: Int, in state: inout State) -> Result<CurlLoop, FetchError> {
        if let started = state.loops[index] { return .success(started) }
        let certificates = state.certificates ?? CertificateStore(configuration)
        state.certificates = certificates
        do throws(FetchError) {
            let loop = try CurlLoop(index: index, configuration: configuration, certificates: certificates,
                                    workers: workers, connectionCache: connectionCachePerLoop)
            state.loops[index] = loop
            return .success(loop)
        } catch {
            return .failure(error)
        }
    }

    /// Answers every waiting transfer and stops every loop (each answers its
    /// own); waits for their threads to exit. Then lets the completion
    /// workers exit once they have run what the loops gave them.
    func shutdown() {
        let (loops, waiting) = state.withLock { state -> ([CurlLoop], [CurlTransfer]) in
            state.stopping = true
            defer { state.waiting.removeAll() }
            return (state.loops.compactMap { $0 }, Array(state.waiting.elements))
        }
        for transfer in waiting {
            transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url)))
        }
        for loop in loops { loop.shutdown() }
        workers.shutdown()
    }

    /// A host's home-loop hash: FNV-1a over "host:port", its high bits
    /// folded in (the same in every process; a few bytes, where the
    /// `Hasher` of a `Substring` was a SipHash per transfer).
    static func homeHash(_ hostPort: Substring) -> UInt64 {
        hostPort.utf8.withContiguousStorageIfAvailable { homeHash(bytes: $0) } ?? homeHash(bytes: hostPort.utf8)
    }

    /// `homeHash` of "host:port"'s bytes.
    static func homeHash<Bytes: Sequence<UInt8>>(bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return hash ^ (hash >> 32)
    }

    /// `url`'s scheme and host as one host's spellings share them: the host
    /// in lower case, the port unless it is the scheme's default
    /// ("https://img.example.com"); nil for a URL that is not http or https.
    static func hostIdentity(of url: String) -> String? {
        guard let (secure, hostPort) = origin(of: url) else { return nil }
        var host = hostPort.lowercased()
        let defaultPort = secure ? ":443" : ":80"
        if host.hasSuffix(defaultPort) { host.removeLast(defaultPort.count) }
        return (secure ? "https://" : "http://") + host
    }

    /// Whether the URL is https, and its "host:port" as written (user info
    /// dropped); nil for a URL that is not http or https.
    static func origin(of url: String) -> (secure: Bool, hostPort: Substring)? {
        // Three calls per URL: the bytes are read in place (String.UTF8View's
        // index steps cost ~2 k instructions per call), and only the bounds
        // found become String indices (ASCII bytes, so on scalar boundaries).
        let found = url.utf8.withContiguousStorageIfAvailable(originBounds) ?? Array(url.utf8).withUnsafeBufferPointer(originBounds)
        guard let found else { return nil }
        let utf8 = url.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: found.start)
        let end = utf8.index(start, offsetBy: found.end - found.start)
        return (found.secure, url[start..<end])
    }

    /// `origin(of:)` on the URL's bytes: the scheme, and the byte offsets of
    /// the authority after any user info.
    static func originBounds(_ bytes: UnsafeBufferPointer<UInt8>) -> (secure: Bool, start: Int, end: Int)? {
        func schemeIs(_ scheme: StaticString) -> Bool {
            let count = scheme.utf8CodeUnitCount
            guard bytes.count > count else { return false }
            for offset in 0..<count where bytes[offset] | 0x20 != scheme.utf8Start[offset] | 0x20 { return false }
            return true
        }
        let secure: Bool
        if schemeIs("https://") {
            secure = true
        } else if schemeIs("http://") {
            secure = false
        } else {
            return nil
        }
        var start = secure ? 8 : 7
        var end = start
        while end < bytes.count, bytes[end] != 0x2F, bytes[end] != 0x3F, bytes[end] != 0x23 { end += 1 }
        var at = end
        while at > start {
            at -= 1
            if bytes[at] == 0x40 { start = at + 1; break }
        }
        return (secure, start, end)
    }
}
