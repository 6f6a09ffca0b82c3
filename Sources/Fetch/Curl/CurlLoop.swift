import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One thread that owns one libcurl multi handle and every easy handle in it.
///
/// Other threads talk to it only through `submit` and `cancel`, which append
/// to a queue under `lock` and, if the loop sleeps in `curl_multi_poll`, call
/// `curl_multi_wakeup` (thread-safe), so the loop reacts within a millisecond
/// or two instead of at the next poll timeout. The loop itself repeats: drain the queue, `curl_multi_perform`,
/// collect finished transfers, `curl_multi_poll`.
///
/// Lifetime: the thread holds a strong reference to the loop until it
/// exits, which happens only after `shutdown()`; the owner (`FetchClient`)
/// calls `shutdown()` from its deinit.
final class CurlLoop: @unchecked Sendable {
    private enum Message {
        case add(CurlTransfer)
        case cancel(CurlTransfer)
    }

    private let lock = Lock()
    private var queue: [Message] = []          // guarded by lock
    private var stopping = false               // guarded by lock
    /// The loop thread is in (or about to enter) `curl_multi_poll`. Guarded by lock.
    private var polling = false
    private let multi: UnsafeMutableRawPointer
    private let configuration: FetchConfiguration

    // Loop-thread state.
    private var active: [ObjectIdentifier: CurlTransfer] = [:]
    /// Submitted transfers beyond `maxActive`, oldest first (`waitingHead` is the next).
    private var waiting: [CurlTransfer] = []
    private var waitingHead = 0
    private let maxActive: Int
    private var byHandle: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var idleHandles: [CurlEasy] = []
    private let maxIdleHandles: Int
    private var thread = pthread_t()
    private var threadStarted = false

    init(configuration: FetchConfiguration) throws(FetchError) {
        if case .failure(let error) = CurlGlobal.initialised { throw error }
        guard let multi = curl_multi_init() else {
            throw FetchError(.network, url: "", curlMessage: "curl_multi_init failed")
        }
        self.multi = multi
        self.configuration = configuration
        maxIdleHandles = max(8, configuration.maxConnections * 2)
        maxActive = max(1, configuration.maxConcurrentTransfers ?? Int.max)
        // Defaults of 7.88 multiplex HTTP/2 already; saying so keeps it true.
        var rc = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        if rc == CURLM_OK {
            // Idle connections kept for reuse: enough for every job to find its own. libcurl keys
            // them by host and port and closes the one idle longest when full; a batch runs each
            // host's URLs back to back, so an active host's connections are the recent ones and stay.
            rc = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(8, configuration.maxConnections * 2))
        }
        if rc == CURLM_OK, let perHost = configuration.maxHostConnections {
            rc = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(1, perHost))
        }
        guard rc == CURLM_OK else {
            curl_multi_cleanup(multi)
            throw FetchError(.network, url: "", curlCode: Int(rc.rawValue),
                             curlMessage: "curl_multi_setopt: " + String(cString: curl_multi_strerror(rc)))
        }
        let retained = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let loop = Unmanaged<CurlLoop>.fromOpaque(argument).takeRetainedValue()
            CurlLoop.blockSIGPIPE()
            loop.run()
            return nil
        }, retained)
        guard created == 0 else {
            Unmanaged<CurlLoop>.fromOpaque(retained).release()
            curl_multi_cleanup(multi)
            throw FetchError(.network, url: "", detail: "could not start the transfer thread: \(String(cString: strerror(created)))")
        }
        threadStarted = true
    }

    /// Queues a transfer; its continuation must already be set.
    func submit(_ transfer: CurlTransfer) {
        let (accepted, wake) = lock.withLock { () -> (Bool, Bool) in
            guard !stopping else { return (false, false) }
            return (true, enqueue(.add(transfer)))
        }
        if wake { curl_multi_wakeup(multi) }
        if !accepted { transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url))) }
    }

    /// Asks the loop to abort a transfer. Safe before, during or after its
    /// registration: the flag covers a cancel that overtakes the `add`.
    func cancel(_ transfer: CurlTransfer) {
        let wake = lock.withLock { () -> Bool in
            transfer.cancelRequested = true
            return enqueue(.cancel(transfer))
        }
        if wake { curl_multi_wakeup(multi) }
    }

    /// Appends under `lock`; true when the caller must wake the loop. Only a
    /// loop that has committed to sleeping needs waking, and only once: while
    /// it works it takes the whole queue before it polls again (see `run`),
    /// which saves a syscall and a spurious poll round per transfer when busy.
    private func enqueue(_ message: Message) -> Bool {
        queue.append(message)
        guard polling else { return false }
        polling = false
        return true
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
        // The wake-up happens under the lock: the loop sees `stopping` only
        // after taking it, so it cannot have freed the multi handle (which
        // it does right after) before this call has used it.
        let wasStopping = lock.withLock { () -> Bool in
            let was = stopping
            stopping = true
            if !was && threadStarted { curl_multi_wakeup(multi) }
            return was
        }
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
            let stop = lock.withLock { () -> Bool in
                swap(&queue, &drained)
                return stopping
            }
            for message in drained {
                switch message {
                case .add(let transfer): start(transfer)
                case .cancel(let transfer): abort(transfer)
                }
            }
            drained.removeAll(keepingCapacity: true)
            if stop { break }
            var running: Int32 = 0
            let rc = curl_multi_perform(multi, &running)
            if rc != CURLM_OK && rc != CURLM_CALL_MULTI_PERFORM {
                failAll(FetchError(.network, url: "", curlCode: Int(rc.rawValue),
                                   curlMessage: "curl_multi_perform: " + String(cString: curl_multi_strerror(rc))))
            }
            collectFinished()
            // Sleeps until a socket is ready, a timer is due, or `submit`/`cancel` wake us;
            // not at all when messages arrived meanwhile (nobody would wake us for them).
            let mayPoll = lock.withLock { () -> Bool in
                polling = queue.isEmpty && !stopping
                return polling
            }
            if mayPoll {
                _ = curl_multi_poll(multi, nil, 0, Defaults.pollTimeoutMs, nil)
                lock.withLock { polling = false }
            }
        }
        // Shutting down: every waiter gets its one answer.
        for transfer in waiting[waitingHead...] { transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url))) }
        waiting.removeAll()
        waitingHead = 0
        for transfer in Array(active.values) { abort(transfer) }
        lock.withLock {
            for case .add(let transfer) in queue { transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url))) }
            queue.removeAll()
        }
        idleHandles.removeAll()
        curl_multi_cleanup(multi)
    }

    /// Starts `transfer`, or queues it while `maxActive` transfers run.
    private func start(_ transfer: CurlTransfer) {
        if lock.withLock({ transfer.cancelRequested }) {
            transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url)))
            return
        }
        if active.count >= maxActive {
            waiting.append(transfer)
            return
        }
        launch(transfer)
    }

    /// Fills free slots from the waiting queue, right where a transfer ended:
    /// the next one starts without a round trip through the awaiting tasks.
    private func startWaiting() {
        while active.count < maxActive && waitingHead < waiting.count {
            let next = waiting[waitingHead]
            waitingHead += 1
            start(next)
        }
        if waitingHead == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            waitingHead = 0
        } else if waitingHead >= 1024 && waitingHead * 2 >= waiting.count {
            waiting.removeFirst(waitingHead)
            waitingHead = 0
        }
    }

    private func launch(_ transfer: CurlTransfer) {
        let easy: CurlEasy
        if let idle = idleHandles.popLast() {
            easy = idle
        } else {
            switch CurlEasy.make(configuration) {
            case .success(let made): easy = made
            case .failure(let failure):
                transfer.finish(.failure(failure.error(url: transfer.spec.url)))
                return
            }
        }
        if let error = transfer.attach(easy) {
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
        active[ObjectIdentifier(transfer)] = transfer
        byHandle[easy.handle] = transfer
    }

    private func abort(_ transfer: CurlTransfer) {
        guard active.removeValue(forKey: ObjectIdentifier(transfer)) != nil, let easy = transfer.easy else {
            if let index = waiting[waitingHead...].firstIndex(where: { $0 === transfer }) {
                waiting.remove(at: index)
                transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url)))
            }
            return
        }
        byHandle.removeValue(forKey: easy.handle)
        _ = curl_multi_remove_handle(multi, easy.handle)
        release(easy, from: transfer)
        transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url)))
        startWaiting()
    }

    private func collectFinished() {
        var message = ccurl_message()
        while ccurl_multi_next_message(multi, &message) != 0 {
            guard let handle = message.easy, let transfer = byHandle.removeValue(forKey: handle),
                  let easy = transfer.easy else { continue }
            active.removeValue(forKey: ObjectIdentifier(transfer))
            let outcome = transfer.outcome(code: message.result, easy: easy)
            _ = curl_multi_remove_handle(multi, handle)
            release(easy, from: transfer)
            transfer.finish(outcome)
        }
        startWaiting()
    }

    private func failAll(_ error: FetchError) {
        for transfer in Array(active.values) {
            if let easy = transfer.easy {
                _ = curl_multi_remove_handle(multi, easy.handle)
                byHandle.removeValue(forKey: easy.handle)
                release(easy, from: transfer)
            }
            active.removeValue(forKey: ObjectIdentifier(transfer))
            transfer.finish(.failure(FetchError(error.kind, url: transfer.spec.url, curlCode: error.curlCode,
                                                curlMessage: error.curlMessage)))
        }
    }

    /// Returns an easy handle to the pool, detached from `transfer` but keeping
    /// the client's options (the connection cache lives in the multi handle,
    /// so reuse survives either way).
    private func release(_ easy: CurlEasy, from transfer: CurlTransfer) {
        easy.detach()
        transfer.easy = nil
        if idleHandles.count < maxIdleHandles { idleHandles.append(easy) }
    }
}
