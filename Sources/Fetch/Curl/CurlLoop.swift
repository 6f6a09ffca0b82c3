import CCurl
import Support
#if canImport(Glibc)
import Glibc
#endif

/// One thread that owns one libcurl multi handle and every easy handle in it:
/// one of a client's `TransferLoops`, which decides what runs here.
///
/// Other threads talk to it only through `submit` and `cancel`, which append
/// to a queue in `shared` and, if the loop sleeps, wake it (an eventfd in its
/// epoll set), so the loop reacts within a millisecond or two instead of at
/// the end of its wait. The loop itself repeats: drain the queue, wait for a
/// socket, libcurl's timer or a wake-up (`ccurl_events_run`, which hands
/// libcurl each ready socket and its timer once due through
/// `curl_multi_socket_action`), collect finished transfers.
///
/// Events, not `curl_multi_perform`: libcurl says which of its sockets to
/// watch for what (CURLMOPT_SOCKETFUNCTION) and when its next timeout is due
/// (CURLMOPT_TIMERFUNCTION), and works only on the transfers with something
/// to do, where `curl_multi_perform` polled every running transfer's socket
/// at every call (40-60 system calls per URL on the internet-like preset).
/// Nothing is lost that no socket would announce: libcurl sets itself a
/// timeout of 0 for a transfer it must come back to (bytes left in OpenSSL's
/// or nghttp2's buffers, a transfer added or resumed, one that waited to
/// share a connection and may now go on), which the timer runs at the loop's
/// next turn.
///
/// A kept-alive connection's socket stays in the epoll set between its
/// transfers, and the next transfer's watch needs no system call: on one
/// server answering 10,000 304s, taking it out and putting it back per
/// transfer cost more CPU than the polls saved. Only a socket libcurl has read
/// (connected, and checked once to be the one the loop opened) is trusted so;
/// libcurl 7.88 closes a socket dropped while connecting without telling the
/// loop, and such entries are checked against the kernel (CCurlEvents.c).
///
/// Completions: a finished transfer's file work and the caller's completion
/// (`FetchClient.start`; of a first 304's, only what it hands off itself:
/// `FetchHandle.handOff`) do not run here. `handOff` collects them during a round (one
/// pass of the loop), and the round's end gives them to one completion
/// worker in one batch: one wake-up per round, not per transfer, and the
/// loop goes straight back to libcurl while the worker completes them.
///
/// Lifetime: the thread holds a strong reference to the loop until it
/// exits, which happens only after `shutdown()`; the owner (`TransferLoops`)
/// calls `shutdown()` when its client goes.
final class CurlLoop: @unchecked Sendable {
    private enum Message {
        case add(CurlTransfer)
        case cancel(CurlTransfer)
        /// A transfer paused for want of a buffer has one again (`StreamHandoff`).
        case resume(CurlTransfer)
        /// The owner gave a host up (`endUnanswered`): its attempts with no response byte yet fail.
        case endUnanswered(host: String, kind: FetchError.Kind, detail: String)
    }

    /// What other threads share with the loop thread.
    private struct Shared {
        var queue: [Message] = []
        var stopping = false
        /// The loop thread is in (or about to enter) its wait (`ccurl_events_run`).
        var polling = false

        /// Appends; true when the caller must wake the loop. Only a loop that
        /// has committed to sleeping needs waking, and only once: while it
        /// works it takes the whole queue before it polls again (see `run`),
        /// which saves a syscall and a spurious poll round per transfer when busy.
        mutating func enqueue(_ message: Message) -> Bool {
            queue.append(message)
            guard polling else { return false }
            polling = false
            return true
        }
    }

    private let shared = Locked(Shared())
    private let multi: UnsafeMutableRawPointer
    /// The loop's epoll set, libcurl's timer and the wake-up (`ccurl_events`): made with the
    /// multi handle, freed by `deinit` (after the thread's `curl_multi_cleanup`), so a wake-up
    /// from any thread holding this loop finds it open.
    private let events: OpaquePointer
    private let configuration: FetchConfiguration
    /// The thread's name, "curl-loop-N" (N: the loop's index), as `top -H` and `perf` show it.
    private let threadName: String

    // Loop-thread state. Read and changed on the loop thread only, a few times
    // per transfer: no dynamic exclusivity check (a `swift_beginAccess` each time).
    @exclusivity(unchecked) private var active = ActiveTransfers()
    @exclusivity(unchecked) private var idleHandles: [CurlEasy] = []
    /// Easy handles libcurl would not take out of the multi handle (`removeFromMulti`), with the
    /// transfers their callbacks may still point at: kept, never reused, until the multi handle goes.
    private var stranded: [(CurlEasy, CurlTransfer)] = []
    private let maxIdleHandles: Int
    private let shares: TLSSessionShares
    private let certificates: CertificateStore
    /// Hosts ("host:port" of https URLs) whose last attempt in this loop could
    /// not complete a connection (connect, TLS handshake, connect timeout).
    ///
    /// Transfers to any other https host wait for a connection being set up
    /// to say whether it multiplexes (CURLOPT_PIPEWAIT), so a burst to a new
    /// HTTP/2 host shares one connection. But libcurl 7.88 releases the
    /// transfers waiting that way one at a time, each when another transfer
    /// ends: behind a host that never completes its handshake they would fail
    /// one connect timeout after another. So when a handshake fails, the
    /// host's transfers that waited and have not sent their request yet start
    /// over, each on a connection of its own, with what is left of their
    /// connect timeout (not afresh), and the host's later transfers do not
    /// wait: its URLs fail after about one connect timeout, not one per URL.
    /// Transfers already on connections of their own are left to their
    /// clocks: starting them over would give each a fresh connect timeout
    /// whenever another one failed (a black hole held its URLs 15-20 s so).
    private var unconnectedHosts: Set<Substring> = []
    /// When `sweepStalls` last looked, in monotonic seconds.
    private var lastStallSweep: Double = 0
    private var dnsExpiry = DNSCacheExpiry(lifetime: Defaults.dnsAnswerLifetime, now: monotonicSeconds())
    private var thread = pthread_t()
    private var threadStarted = false
    /// Completions handed off during this round, given to a worker at its end (`handOff`).
    @exclusivity(unchecked) private var roundCompletions: [@Sendable () -> Void] = []
    /// The round's completions as `handOffRound` gives them away (swapped in: no allocation per
    /// round). Jobs that run here, on this thread (no worker could take them), may hand off
    /// more: those join `roundCompletions`, never the array being given away.
    @exclusivity(unchecked) private var handingOff: [@Sendable () -> Void] = []
    /// The workers' backlog (`CompletionWorkers.totalPending`) as this round's first
    /// `handOffBounded` read it: one look per round, not a lock per 304. Within a round
    /// the workers only shrink it; this round's own jobs are counted in `roundCompletions`.
    private var roundBacklog: Int?
    /// What runs at this round's end (`atRoundEnd`): per owner, its work and the round's items.
    private var roundEnds: [RoundEnd] = []
    private var runningRoundEnds: [RoundEnd] = []   // swapped in as they run: no allocation per round

    typealias RoundEndItem = AnyObject & Sendable

    private struct RoundEnd {
        let owner: ObjectIdentifier
        var items: [RoundEndItem]
        let work: @Sendable ([RoundEndItem]) -> Void
    }
    private let workers: CompletionWorkers

    /// `connectionCache`: this loop's share of the client's connection cache
    /// (CURLMOPT_MAXCONNECTS) and of its pool of idle easy handles.
    /// `workers`: the client's completion workers, which take what `handOff` is given.
    init(index: Int, configuration: FetchConfiguration, certificates: CertificateStore, workers: CompletionWorkers,
         connectionCache: Int) throws(FetchError) {
        self.workers = workers
        threadName = "curl-loop-\(index)"
        if case .failure(let error) = CurlGlobal.initialised { throw error }
        guard let multi = curl_multi_init() else {
            throw FetchError(.network, url: "", curlMessage: "curl_multi_init failed")
        }
        self.multi = multi
        self.configuration = configuration
        var why: UnsafePointer<CChar>?
        guard let events = ccurl_events_new(multi, &why) else {
            let error = errno
            _ = curl_multi_cleanup(multi)   // a new multi handle with no transfer: nothing to undo
            let call = why.map { String(cString: $0) } ?? "ccurl_events_new"
            throw FetchError(.network, url: "", detail: "could not set up a transfer loop: \(call)"
                                 + (error != 0 ? ": " + String(cString: strerror(error)) : ""))
        }
        self.events = events
        switch TLSSessionShares.make() {
        case .success(let shares): self.shares = shares
        case .failure(let error):
            _ = curl_multi_cleanup(multi)
            ccurl_events_free(events)
            throw error
        }
        self.certificates = certificates
        maxIdleHandles = connectionCache
        // Defaults of 7.88 multiplex HTTP/2 already; saying so keeps it true.
        var rc = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        if rc == CURLM_OK {
            // Idle connections kept for reuse (`TransferLoops.connectionCache`): enough for every job
            // to find its own, and about one per host a batch works on. libcurl keys them by host and
            // port and closes the one idle longest when full: a host whose next URL comes after a
            // round of the other hosts finds its connection still there.
            rc = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, connectionCache)
        }
        if rc == CURLM_OK, let perHost = configuration.maxHostConnections {
            rc = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(1, perHost))
        }
        guard rc == CURLM_OK else {
            _ = curl_multi_cleanup(multi)
            ccurl_events_free(events)
            throw FetchError(.network, url: "", curlCode: Int(rc.rawValue),
                             curlMessage: "curl_multi_setopt: " + String(cString: curl_multi_strerror(rc)))
        }
        let retained = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let loop = Unmanaged<CurlLoop>.fromOpaque(argument).takeRetainedValue()
            CurlLoop.blockSIGPIPE()
            nameCurrentThread(loop.threadName)
            // One SSL_CTX for the loop's TLS connections, not one each, where every one of them (an
            // HTTPS proxy's too) gets the client's CA store from the SSL_CTX callback: a context
            // handed out again keeps that store, and an SSL verifies with its context's store as it
            // is then. Without the client's store (--insecure, libcurl's own CA files), libcurl
            // fills each connection's store itself after the first handshake step, or not at all
            // where it does not verify: a proxy's handshake still under way would then verify
            // against another connection's store, empty under --insecure.
            ccurl_ssl_ctx_reuse_begin(loop.certificates.store)
            loop.run()
            ccurl_ssl_ctx_reuse_end()
            return nil
        }, retained)
        guard created == 0 else {
            Unmanaged<CurlLoop>.fromOpaque(retained).release()
            _ = curl_multi_cleanup(multi)
            ccurl_events_free(events)
            throw FetchError(.network, url: "", detail: "could not start a transfer thread: \(String(cString: strerror(created)))")
        }
        threadStarted = true
    }

    deinit {
        // The thread has ended (it holds this loop until then) and cleaned the multi handle up,
        // the last user of the set's callbacks; a loop whose `init` failed freed it there.
        if threadStarted { ccurl_events_free(events) }
    }

    /// Queues a transfer; its completion must already be set.
    func submit(_ transfer: CurlTransfer) {
        let (accepted, wake) = shared.withLock { shared -> (Bool, Bool) in
            guard !shared.stopping else { return (false, false) }
            return (true, shared.enqueue(.add(transfer)))
        }
        if wake { ccurl_events_wake(events) }
        if !accepted { transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url))) }
    }

    /// Asks the loop to abort a transfer. Safe before, during or after its
    /// registration: the flag covers a cancel that overtakes the `add`.
    func cancel(_ transfer: CurlTransfer) {
        let wake = shared.withLock { shared -> Bool in
            transfer.cancelRequested.store(true, ordering: .releasing)
            return shared.enqueue(.cancel(transfer))
        }
        if wake { ccurl_events_wake(events) }
    }

    /// Asks the loop to end, failing each with `kind` and `detail`, every
    /// transfer to `host` (`TransferLoops.hostIdentity`) that has received no
    /// byte of a response yet: still resolving, connecting, in its TLS
    /// handshake, waiting to share a connection being set up, or with its
    /// request sent and nothing back (`TransferLoops.endUnanswered`).
    func endUnanswered(host: String, kind: FetchError.Kind, detail: String) {
        let wake = shared.withLock { shared -> Bool in
            guard !shared.stopping else { return false }
            return shared.enqueue(.endUnanswered(host: host, kind: kind, detail: detail))
        }
        if wake { ccurl_events_wake(events) }
    }

    /// Asks the loop to resume a transfer its write callback paused
    /// (`StreamHandoff`); a transfer that has ended meanwhile is left alone.
    func resume(_ transfer: CurlTransfer) {
        let wake = shared.withLock { shared -> Bool in
            guard !shared.stopping else { return false }
            return shared.enqueue(.resume(transfer))
        }
        if wake { ccurl_events_wake(events) }
    }

    /// Runs `completion` on a completion worker. Called on this loop's thread
    /// (a transfer's completion, which `finish` calls there), it joins this
    /// round's batch, which goes to one worker when the round ends
    /// (`handOffRound`), after every transfer the round finished; from any
    /// other thread it goes to a worker at once.
    func handOff(_ completion: @escaping @Sendable () -> Void) {
        // `thread` was set before any transfer reached this loop (`submit` comes after `init`).
        if pthread_equal(pthread_self(), thread) != 0 {
            roundCompletions.append(completion)
        } else {
            workers.run([completion])
        }
    }

    /// `handOff` of work that nothing else bounds (`FetchHandle.handOff`:
    /// its fetch gave its slot back already): on this loop's thread, while
    /// the workers have `Defaults.completionBacklogLimit` jobs pending (this
    /// round's included), it runs here, now, instead of waiting with them.
    func handOffBounded(_ work: @escaping @Sendable () -> Void) {
        guard pthread_equal(pthread_self(), thread) != 0 else { return workers.run([work]) }
        let backlog = roundBacklog ?? workers.totalPending()
        roundBacklog = backlog
        if roundCompletions.count + backlog >= Defaults.completionBacklogLimit {
            work()
        } else {
            roundCompletions.append(work)
        }
    }

    /// Collects `item` for `owner`'s `work`, which runs on this loop's thread
    /// at the end of this round with every item the owner gave in the round,
    /// in order: after every transfer the round finished and before the
    /// round's hand-offs go to a worker (`handOffRound`). For completions that
    /// run on the loop (a first 304's, `FetchClient.start`) to do together,
    /// once per round, what each would do alone (a batch gives the round's
    /// slots back to its scheduler in one step: `FetchHandle.atRoundEnd`).
    /// The first `work` an owner gives in a round is the one that runs. From
    /// any other thread, `work` runs now, with `item` alone.
    func atRoundEnd(for owner: ObjectIdentifier, with item: RoundEndItem,
                    _ work: @escaping @Sendable ([RoundEndItem]) -> Void) {
        guard pthread_equal(pthread_self(), thread) != 0 else { return work([item]) }
        if let index = roundEnds.firstIndex(where: { $0.owner == owner }) {
            roundEnds[index].items.append(item)
        } else {
            roundEnds.append(RoundEnd(owner: owner, items: [item], work: work))
        }
    }

    /// Runs the round's `atRoundEnd` work, in the order first given (and any it gives).
    private func runRoundEnds() {
        while !roundEnds.isEmpty {
            swap(&roundEnds, &runningRoundEnds)
            for end in runningRoundEnds { end.work(end.items) }
            runningRoundEnds.removeAll(keepingCapacity: true)
        }
    }

    /// Gives the round's completions to the least busy worker, in the order handed off.
    private func handOffRound() {
        roundBacklog = nil
        while !roundCompletions.isEmpty {
            swap(&roundCompletions, &handingOff)
            workers.run(taking: &handingOff)   // left empty: what the jobs hold is freed on the worker
        }
    }

    /// A peer that closes a socket mid-write must be an error (EPIPE), not the
    /// death of the process. Blocked on this thread (and on the resolver
    /// threads libcurl starts from it), a SIGPIPE is never delivered; the
    /// process-wide disposition stays as the host set it.
    private static func blockSIGPIPE() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)   // fails only for an invalid `how`
    }

    /// Aborts everything and stops the thread; waits for it to exit.
    func shutdown() {
        let wasStopping = shared.withLock { shared -> Bool in
            let was = shared.stopping
            shared.stopping = true
            return was
        }
        if !wasStopping && threadStarted { ccurl_events_wake(events) }
        guard !wasStopping, threadStarted else { return }
        if pthread_equal(pthread_self(), thread) == 0 {
            pthread_join(thread, nil)
        } else {
            pthread_detach(thread)
        }
    }

    // MARK: - Loop thread

    private func run() {
        var drained: [Message] = []   // swapped with `queue`: no copy, no allocation per round
        while true {
            let stop = shared.withLock { shared -> Bool in
                swap(&shared.queue, &drained)
                return shared.stopping
            }
            for message in drained {
                switch message {
                case .add(let transfer): start(transfer)
                case .cancel(let transfer): abort(transfer)
                case .resume(let transfer): unpause(transfer)
                case .endUnanswered(let host, let kind, let detail): endUnanswered(host, kind, detail)
                }
            }
            drained.removeAll(keepingCapacity: true)
            if stop { break }
            // Sleeps until a socket is ready, libcurl's timer is due, or `submit`/`cancel` wake us;
            // not at all when messages arrived meanwhile (nobody would wake us for them). Then
            // libcurl works on what is ready.
            let mayWait = shared.withLock { shared -> Bool in
                shared.polling = shared.queue.isEmpty && !shared.stopping
                return shared.polling
            }
            let rc = ccurl_events_run(events, mayWait ? Defaults.pollTimeoutMs : 0)
            if mayWait { shared.withLock { $0.polling = false } }
            checkEvents(rc)
            collectFinished()
            sweepStalls()
            runRoundEnds()
            handOffRound()
        }
        // Shutting down: every transfer gets its one answer (outside the lock:
        // an answer may hand a slot to a transfer bound for this loop, see `submit`).
        for transfer in active.all { abort(transfer) }
        let unstarted = shared.withLock { shared -> [Message] in
            defer { shared.queue.removeAll() }
            return shared.queue
        }
        for case .add(let transfer) in unstarted { transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url))) }
        runRoundEnds()
        handOffRound()
        idleHandles.removeAll()
        // Refused only for a bad handle or a call from one of libcurl's callbacks: the loop's own
        // handle, here, is neither, and the thread ends either way.
        _ = curl_multi_cleanup(multi)
        stranded.removeAll()   // after the multi handle that held them
    }

    /// Fails every running transfer when libcurl's run of the events failed
    /// (`rc`, from `ccurl_events_run`), or the epoll set did (a socket it
    /// could not watch makes libcurl end every transfer, as aborted by a
    /// callback: not a cancellation). Before `collectFinished`, which would
    /// take those ends for cancellations.
    private func checkEvents(_ rc: CURLMcode) {
        var call: UnsafePointer<CChar>?
        let error = ccurl_events_failure(events, &call)
        guard error != 0 || rc != CURLM_OK else { return }
        let what = error != 0 ? (call.map { String(cString: $0) } ?? "epoll") + ": " + String(cString: strerror(error))
                              : "curl_multi_socket_action: " + String(cString: curl_multi_strerror(rc))
        failAll(FetchError(.network, url: "", curlCode: rc == CURLM_OK ? nil : Int(rc.rawValue),
                           curlMessage: "the transfer loop's events failed: " + what))
    }

    /// Starts `transfer` (the client's limit on transfers at once is kept by `TransferLoops`).
    private func start(_ transfer: CurlTransfer) {
        if transfer.cancelRequested.load(ordering: .acquiring) {
            transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url)))
            return
        }
        // Its host was given up on after the attempt was let go: the owner said so before it asked
        // the loops to end the host's attempts (`endUnanswered`), so an attempt that arrives after
        // that message learns it here, and one that came before it was ended by it.
        if let refusal = transfer.gate?.refusal() {
            transfer.finish(.refused(FetchError(refusal.kind, url: transfer.spec.url, detail: refusal.detail)))
            return
        }
        let easy: CurlEasy
        let share = shares.share(for: transfer.multiplexingHost)
        if let idle = idleHandles.popLast() {
            easy = idle
        } else {
            switch CurlEasy.make(configuration, share: share, certificates: certificates) {
            case .success(let made): easy = made
            case .failure(let failure):
                transfer.finish(.failure(failure.error(url: transfer.spec.url)))
                return
            }
            // Its connections' sockets opened and closed through the loop's epoll set, which may then
            // keep an idle one watched (CCurlEvents.c). The handle stays this loop's (`idleHandles`).
            let rc = ccurl_events_attach(events, easy.handle)
            guard rc == CURLE_OK else {
                transfer.finish(.failure(CurlOptionFailure(call: "setting CURLOPT_OPENSOCKETFUNCTION, CURLOPT_CLOSESOCKETFUNCTION",
                                                           code: rc).error(url: transfer.spec.url)))
                return
            }
        }
        let wait = transfer.multiplexingHost.map { !unconnectedHosts.contains($0) } ?? false
        if let failure = easy.use(share) ?? easy.setConnectionPolicy(dnsCacheTimeout: dnsExpiry.timeout(now: monotonicSeconds()),
                                                                     keepConnection: transfer.gate?.keepsConnection() ?? true) {
            release(easy, from: transfer)
            transfer.finish(.failure(failure.error(url: transfer.spec.url)))
            return
        }
        if let error = transfer.attach(easy, waitForMultiplexing: wait) {
            release(easy, from: transfer)
            transfer.finish(.failure(error))
            return
        }
        let rc = curl_multi_add_handle(multi, easy.handle)
        guard rc == CURLM_OK else {
            release(easy, from: transfer)
            transfer.finish(.failure(FetchError(.network, url: transfer.spec.url, curlCode: Int(rc.rawValue),
                                                curlMessage: "curl_multi_add_handle: " + String(cString: curl_multi_strerror(rc)))))
            return
        }
        if wait { transfer.waitingSince = monotonicSeconds() }
        active.insert(transfer)
    }

    private func abort(_ transfer: CurlTransfer) {
        end(transfer, .failure(FetchError(.cancelled, url: transfer.spec.url)))
    }

    /// Ends a running transfer with `outcome`, if it still runs here. Its
    /// handle may be out of the multi handle already (`restartWaiting`).
    private func end(_ transfer: CurlTransfer, _ outcome: AttemptOutcome) {
        guard active.remove(transfer), let easy = transfer.easy else { return }
        if removeFromMulti(easy, of: transfer) { release(easy, from: transfer) }
        transfer.finish(outcome)
    }

    /// Takes `easy` out of the multi handle (libcurl 7.88 answers CURLM_OK for
    /// a handle already out); false when libcurl refuses, which it does only
    /// for a bad handle or a call from inside its callbacks (the loop makes
    /// neither). Such a handle may still run: it is detached from `transfer`
    /// (its next write or header callback then aborts it; the prerequest
    /// callback lets it go on, and a PUT's read callback still reads from the
    /// transfer) and kept with it in `stranded`, so that nothing libcurl
    /// still holds is freed or reused.
    private func removeFromMulti(_ easy: CurlEasy, of transfer: CurlTransfer) -> Bool {
        guard curl_multi_remove_handle(multi, easy.handle) != CURLM_OK else { return true }
        _ = easy.detach()   // never reused, so its clocks need not come back
        transfer.easy = nil
        transfer.waitingSince = nil
        stranded.append((easy, transfer))
        return false
    }

    /// Fails the transfers to `host` that have received no byte of a
    /// response (and were not redirected: a redirect's connection may be to
    /// another host) with `kind` and `detail`; the others go on. Whether the
    /// request was sent does not matter: over plain http it goes out on
    /// connect, and a host given up on does not answer it (SPEC §6: its
    /// other URLs fail at once). Not a cancellation: each fetch goes on as
    /// after any failed attempt (its gate decides).
    private func endUnanswered(_ host: String, _ kind: FetchError.Kind, _ detail: String) {
        let unanswered = active.all.filter { transfer in
            guard let easy = transfer.easy, TransferLoops.hostIdentity(of: transfer.spec.url) == host else { return false }
            return easy.seconds(CURLINFO_STARTTRANSFER_TIME) == 0 && easy.long(CURLINFO_REDIRECT_COUNT) == 0
        }
        for transfer in unanswered {
            end(transfer, .failure(FetchError(kind, url: transfer.spec.url, detail: detail)))
        }
    }

    /// Lets a paused transfer receive again. libcurl may hand it the chunk it
    /// kept right here, inside `curl_easy_pause` (which may pause it again);
    /// if the write callback refuses it (`--max-size`, a failed sink), the
    /// transfer ends here with that error, as it would in `collectFinished`.
    private func unpause(_ transfer: CurlTransfer) {
        guard active.contains(transfer), let easy = transfer.easy else { return }
        let rc = curl_easy_pause(easy.handle, CURLPAUSE_RECV_CONT | CURLPAUSE_SEND_CONT)
        // CURLE_ABORTED_BY_CALLBACK: the epoll set could not watch the transfer's socket
        // (the write callback refuses with CURLE_WRITE_ERROR), and `checkEvents` fails every transfer.
        guard rc != CURLE_OK, rc != CURLE_ABORTED_BY_CALLBACK else { return }
        end(transfer, transfer.outcome(code: rc, easy: easy))
    }

    private func collectFinished() {
        var message = ccurl_message()
        var failedHosts: Set<Substring> = []
        while ccurl_multi_next_message(multi, &message) != 0 {
            // The handle's `CurlEasy` (CURLINFO_PRIVATE) and its running transfer: none for a handle
            // detached already (stranded: `removeFromMulti`), which then has no transfer to end. A
            // handle libcurl gave no CURLINFO_PRIVATE for (it cannot in 7.88) is looked for among the
            // running transfers, so that its transfer still gets its answer.
            let found: CurlTransfer?
            if let context = message.context {
                found = Unmanaged<CurlEasy>.fromOpaque(context).takeUnretainedValue().transferContext
                    .map { Unmanaged<CurlTransfer>.fromOpaque($0).takeUnretainedValue() }
            } else {
                found = active.all.first { $0.easy?.handle == message.easy }
            }
            guard let transfer = found, active.remove(transfer), let easy = transfer.easy else { continue }
            let outcome = transfer.outcome(code: message.result, easy: easy)
            if let host = noteConnection(transfer.multiplexingHost, code: message.result, easy: easy) { failedHosts.insert(host) }
            if easy.dnsCacheTimeout != -1 { dnsExpiry.ended(timeout: easy.dnsCacheTimeout, now: monotonicSeconds()) }
            if removeFromMulti(easy, of: transfer) { release(easy, from: transfer) }
            transfer.finish(outcome)
        }
        if !failedHosts.isEmpty { restartWaiting(for: failedHosts) }
    }

    /// Ends the transfers whose body has ended by its own structure and then
    /// stalled short of its `Content-Length` (`CurlTransfer.endedBodyStall`);
    /// looks at most once per `Defaults.stallSweepInterval`.
    private func sweepStalls() {
        let stallTime = configuration.endedBodyStallTime
        guard stallTime > 0, !active.isEmpty else { return }
        let now = monotonicSeconds()
        guard now - lastStallSweep >= Defaults.stallSweepInterval else { return }
        lastStallSweep = now
        var stalled: [(CurlTransfer, FetchError)] = []
        for transfer in active.all {
            if let failure = transfer.endedBodyStall(now: now, after: stallTime) { stalled.append((transfer, failure)) }
        }
        for (transfer, failure) in stalled { end(transfer, .failure(failure)) }
    }

    private func failAll(_ error: FetchError) {
        for transfer in active.all {
            if let easy = transfer.easy, removeFromMulti(easy, of: transfer) { release(easy, from: transfer) }
            active.remove(transfer)
            transfer.finish(.failure(FetchError(error.kind, url: transfer.spec.url, curlCode: error.curlCode,
                                                curlMessage: error.curlMessage)))
        }
    }

    /// Returns an easy handle to the pool, detached from `transfer` but keeping
    /// the client's options (the connection cache lives in the multi handle,
    /// so reuse survives either way).
    private func release(_ easy: CurlEasy, from transfer: CurlTransfer) {
        let reusable = easy.detach()
        transfer.easy = nil
        transfer.waitingSince = nil
        if reusable && idleHandles.count < maxIdleHandles { idleHandles.append(easy) }
    }

    /// Updates `unconnectedHosts` from a finished attempt to `host` (its
    /// `multiplexingHost`); the host when its connection failed before the TLS handshake completed.
    private func noteConnection(_ host: Substring?, code: CURLcode, easy: CurlEasy) -> Substring? {
        guard let host else { return nil }
        if code == CURLE_OK {
            unconnectedHosts.remove(host)
            return nil
        }
        switch FetchError.Kind(curlCode: code) {
        case .connect, .timeout, .tls:
            guard easy.seconds(CURLINFO_APPCONNECT_TIME) == 0 else { return nil }   // a handshake did complete
            if unconnectedHosts.count >= Defaults.unconnectedHostsRemembered { unconnectedHosts.removeAll() }
            unconnectedHosts.insert(host)
            return host
        default:
            return nil
        }
    }

    /// Starts over, each on a connection of its own, the transfers to `hosts`
    /// that waited to share a connection and have not sent their request yet
    /// (the connection they waited for will never complete; see
    /// `unconnectedHosts`), with what is left of their clocks. One that has
    /// waited its whole connect timeout has had it: it fails as a timeout.
    private func restartWaiting(for hosts: Set<Substring>) {
        let stalled = active.all.filter { transfer in
            guard transfer.waitingSince != nil, let easy = transfer.easy, let host = transfer.multiplexingHost,
                  hosts.contains(host) else { return false }
            return easy.seconds(CURLINFO_PRETRANSFER_TIME) == 0
        }
        let now = monotonicSeconds()
        for transfer in stalled {
            guard let easy = transfer.easy, let since = transfer.waitingSince else { continue }
            transfer.waitingSince = nil
            let waited = now - since
            // A handle libcurl will not remove is still in the multi handle: left as it is.
            guard curl_multi_remove_handle(multi, easy.handle) == CURLM_OK else { continue }
            var failure: FetchError?
            if configuration.connectTimeout > 0 && waited >= configuration.connectTimeout {
                failure = FetchError(.timeout, url: transfer.spec.url, curlCode: Int(CURLE_OPERATION_TIMEDOUT.rawValue),
                                     curlMessage: "Connection timeout after \(Int(waited * 1000)) ms"
                                         + " (waiting to share a connection that was never set up)")
            } else {
                // If these options cannot be set, the transfer waits as before, or has its clocks
                // afresh: started over all the same.
                _ = easy.waitForMultiplexing(false)
                _ = easy.continueClocks(after: waited)
                let rc = curl_multi_add_handle(multi, easy.handle)
                if rc != CURLM_OK {
                    failure = FetchError(.network, url: transfer.spec.url, curlCode: Int(rc.rawValue),
                                         curlMessage: "curl_multi_add_handle: " + String(cString: curl_multi_strerror(rc)))
                }
            }
            guard let failure else { continue }
            // Out of the multi handle (removed above, not added again): `end` removes it once more,
            // which libcurl 7.88 answers CURLM_OK for a handle not in a multi handle.
            end(transfer, .failure(failure))
        }
    }
}
