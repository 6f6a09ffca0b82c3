import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One thread that owns one libcurl multi handle and every easy handle in it.
///
/// Other threads talk to it only through `submit` and `cancel`, which append
/// to a queue under `lock` and call `curl_multi_wakeup` (thread-safe), so the
/// loop reacts within a millisecond or two instead of at the next poll
/// timeout. The loop itself repeats: drain the queue, `curl_multi_perform`,
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
    private var nextID: UInt64 = 0             // guarded by lock
    private let multi: UnsafeMutableRawPointer

    // Loop-thread state.
    private var active: [UInt64: CurlTransfer] = [:]
    private var byHandle: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var idleHandles: [UnsafeMutableRawPointer] = []
    private let maxIdleHandles = 64
    private var thread = pthread_t()
    private var threadStarted = false

    init(maxConnections: Int) throws(FetchError) {
        if case .failure(let error) = CurlGlobal.initialised { throw error }
        guard let multi = curl_multi_init() else {
            throw FetchError(.network, url: "", curlMessage: "curl_multi_init failed")
        }
        self.multi = multi
        // Defaults of 7.88 multiplex HTTP/2 already; saying so keeps it true.
        let rc = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        guard rc == CURLM_OK else {
            curl_multi_cleanup(multi)
            throw FetchError(.network, url: "", curlCode: Int(rc.rawValue),
                             curlMessage: "CURLMOPT_PIPELINING: " + String(cString: curl_multi_strerror(rc)))
        }
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(8, maxConnections * 2))
        let retained = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { argument in
            let loop = Unmanaged<CurlLoop>.fromOpaque(argument!).takeRetainedValue()
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

    func makeID() -> UInt64 { lock.withLock { nextID += 1; return nextID } }

    /// Queues a transfer; its continuation must already be set.
    func submit(_ transfer: CurlTransfer) {
        let accepted = lock.withLock { () -> Bool in
            guard !stopping else { return false }
            queue.append(.add(transfer))
            return true
        }
        if accepted {
            curl_multi_wakeup(multi)
        } else {
            transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url)))
        }
    }

    /// Asks the loop to abort a transfer. Safe before, during or after its
    /// registration: the flag covers a cancel that overtakes the `add`.
    func cancel(_ transfer: CurlTransfer) {
        lock.withLock {
            transfer.cancelRequested = true
            queue.append(.cancel(transfer))
        }
        curl_multi_wakeup(multi)
    }

    /// Aborts everything and stops the thread; waits for it to exit.
    func shutdown() {
        let wasStopping = lock.withLock { () -> Bool in
            let was = stopping
            stopping = true
            return was
        }
        guard !wasStopping, threadStarted else { return }
        curl_multi_wakeup(multi)
        if pthread_equal(pthread_self(), thread) == 0 {
            pthread_join(thread, nil)
        } else {
            pthread_detach(thread)
        }
    }

    // MARK: - Loop thread

    private func run() {
        while true {
            let (messages, stop) = lock.withLock { () -> ([Message], Bool) in
                let taken = queue
                queue.removeAll(keepingCapacity: true)
                return (taken, stopping)
            }
            for message in messages {
                switch message {
                case .add(let transfer): start(transfer)
                case .cancel(let transfer): abort(transfer)
                }
            }
            if stop { break }
            var running: Int32 = 0
            let rc = curl_multi_perform(multi, &running)
            if rc != CURLM_OK && rc != CURLM_CALL_MULTI_PERFORM {
                failAll(FetchError(.network, url: "", curlCode: Int(rc.rawValue),
                                   curlMessage: "curl_multi_perform: " + String(cString: curl_multi_strerror(rc))))
            }
            collectFinished()
            // Sleeps until a socket is ready, a timer is due, or `submit`/`cancel` wake us.
            _ = curl_multi_poll(multi, nil, 0, Defaults.pollTimeoutMs, nil)
        }
        // Shutting down: every waiter gets its one answer.
        for transfer in Array(active.values) { abort(transfer) }
        lock.withLock {
            for case .add(let transfer) in queue { transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url))) }
            queue.removeAll()
        }
        for handle in idleHandles { curl_easy_cleanup(handle) }
        idleHandles.removeAll()
        curl_multi_cleanup(multi)
    }

    private func start(_ transfer: CurlTransfer) {
        if lock.withLock({ transfer.cancelRequested }) {
            transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url)))
            return
        }
        guard let easy = idleHandles.popLast() ?? curl_easy_init() else {
            transfer.finish(.failure(FetchError(.network, url: transfer.spec.url, curlMessage: "curl_easy_init failed")))
            return
        }
        transfer.easy = easy
        if let error = transfer.configure(easy) {
            release(easy)
            transfer.easy = nil
            transfer.finish(.failure(error))
            return
        }
        let rc = curl_multi_add_handle(multi, easy)
        guard rc == CURLM_OK else {
            release(easy)
            transfer.easy = nil
            transfer.finish(.failure(FetchError(.network, url: transfer.spec.url, curlCode: Int(rc.rawValue),
                                                curlMessage: "curl_multi_add_handle: " + String(cString: curl_multi_strerror(rc)))))
            return
        }
        active[transfer.id] = transfer
        byHandle[easy] = transfer
    }

    private func abort(_ transfer: CurlTransfer) {
        guard active.removeValue(forKey: transfer.id) != nil, let easy = transfer.easy else { return }
        byHandle.removeValue(forKey: easy)
        _ = curl_multi_remove_handle(multi, easy)
        transfer.easy = nil
        release(easy)
        transfer.finish(.failure(FetchError(.cancelled, url: transfer.spec.url)))
    }

    private func collectFinished() {
        var message = ccurl_message()
        while ccurl_multi_next_message(multi, &message) != 0 {
            guard let easy = message.easy, let transfer = byHandle.removeValue(forKey: easy) else { continue }
            active.removeValue(forKey: transfer.id)
            let outcome = transfer.outcome(code: message.result, easy: easy)
            _ = curl_multi_remove_handle(multi, easy)
            transfer.easy = nil
            release(easy)
            transfer.finish(outcome)
        }
    }

    private func failAll(_ error: FetchError) {
        for transfer in Array(active.values) {
            if let easy = transfer.easy {
                _ = curl_multi_remove_handle(multi, easy)
                byHandle.removeValue(forKey: easy)
                release(easy)
                transfer.easy = nil
            }
            active.removeValue(forKey: transfer.id)
            transfer.finish(.failure(error))
        }
    }

    /// Returns an easy handle to the pool, wiped of this transfer's options
    /// (the connection cache lives in the multi handle, so reuse survives).
    private func release(_ easy: UnsafeMutableRawPointer) {
        curl_easy_reset(easy)
        if idleHandles.count < maxIdleHandles {
            idleHandles.append(easy)
        } else {
            curl_easy_cleanup(easy)
        }
    }
}
