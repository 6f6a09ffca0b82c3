/// The transfer limits of asyncfetch, in one place. The command line, the
/// loader and the fetch engine all start from these values. The cache
/// policy's defaults live with their owners: `CachingDefaults`
/// (HTTPCaching), `CacheDefaults` (DiskCache), `RemoteDefaults` (RemoteCache).
public enum Defaults {
    /// The version reported in `User-Agent` and `--version`.
    public static let version = "0.1.0"
    /// `User-Agent` sent with every request.
    public static let userAgent = "asyncfetch/\(version)"
    /// Concurrent transfers over all hosts (`--jobs`). The per-host limit
    /// is what protects servers; this bounds the process (issue 21). 256,
    /// not 64: with thousands of hosts most transfers open a connection
    /// (two round trips), and 64 slots held the 100,000-URL preset at
    /// 2.02 × its polite floor (305 s); 256 took 174.6 s (1.16 ×) in 57 MB,
    /// and cost nothing on 5,000 URLs (31.4 s; 47 MB). About 128 KiB of
    /// buffers per running transfer.
    public static let jobs = 256
    /// Concurrent transfers to one host (`--jobs-per-host`), as browsers
    /// allow over HTTP/1.1; a host that answers 429 gets fewer.
    public static let jobsPerHost = 6
    /// Connect failures or timeouts in a row after which a host's queued
    /// and later URLs fail at once, for the rest of the run.
    public static let hostGiveUpAfter = 3
    /// Transfers at once to a host that has connected but not answered yet
    /// in this run: a host that accepts connections and never answers holds
    /// no more slots than this while its first timeouts run, and as many as
    /// `hostGiveUpAfter` run together, so they give it up after one timeout.
    public static let hostUnansweredLimit = hostGiveUpAfter
    /// A host that answers 429 or 503 without `Retry-After` is paused this
    /// long, doubling with each pushback in a row.
    public static let hostPauseBase: Double = 1
    /// The longest a host is paused, its `Retry-After` included.
    public static let hostPauseMax: Double = 30
    /// Answers in a row after which a host's reduced limit grows by one.
    public static let hostGrowAfter = 4
    /// Largest body accepted (`--max-size`): 64 MiB.
    public static let maxSize: Int64 = 64 * 1024 * 1024
    /// Seconds allowed to establish a connection (`--connect-timeout`).
    public static let connectTimeout: Double = 10
    /// Seconds allowed for one attempt, connect to last byte (`--timeout`).
    public static let timeout: Double = 60
    /// A transfer slower than `lowSpeedLimit` bytes/s for `lowSpeedTime`
    /// seconds is aborted as a timeout.
    public static let lowSpeedLimit = 1024
    public static let lowSpeedTime: Double = 30
    /// Seconds a body may stop arriving, short of its `Content-Length`, once
    /// its own structure has ended (an image whose last chunk arrived, see
    /// `BodySink.hasEnded`), before the attempt fails: the server announced
    /// more than it sent and stalled, and a message cut short is never
    /// stored as whole. Without this, such a server held each attempt for
    /// the low-speed abort (30 s, retried: 91 s, and the host given up as
    /// timing out). Not retried (`network`), as a connection that closes
    /// short of its `Content-Length` is not: the server will say the same again.
    /// 10 s, not less: an image may carry trailing bytes after its end (a
    /// motion photo's video, an MPO's second frame) that a live server can
    /// pause in for a few seconds (TCP retransmission backs off 1, 2, 4 s).
    /// Time the transfer spends paused for a lagging worker does not count.
    public static let endedBodyStallTime: Double = 10
    /// How often a transfer loop looks for such stalls, at most.
    static let stallSweepInterval: Double = 1
    /// Redirects followed before giving up (SPEC §5).
    public static let maxRedirects = 10
    /// Extra attempts after a retryable failure (`--retries`).
    public static let retries = 2
    /// First backoff ceiling; doubles on every retry (full jitter below it).
    public static let retryBaseDelay: Double = 0.25
    /// Largest backoff, and the cap applied to a server's `Retry-After`.
    public static let retryMaxDelay: Double = 10
    /// libcurl's receive buffer per transfer (CURLOPT_BUFFERSIZE): fewer,
    /// larger write callbacks for big bodies.
    public static let receiveBufferSize = 64 * 1024
    /// A 2xx body up to this size is held in memory and handed to the sink
    /// off the transfer thread (by the awaiting task, or a completion worker
    /// for `FetchClient.start`); a larger one streams. Memory held at most:
    /// this times the fetches started whose completion has not run.
    public static let bufferedBodyLimit = 64 * 1024
    /// The room first given to a held body whose length is not known ahead (no
    /// `Content-Length`, or a content coding): it grows from there, by doubling.
    public static let heldBodyStartCapacity = 16 * 1024
    /// Bytes reserved for a response's header block as its status line arrives (more grow it):
    /// with the array's 32-byte header, a request glibc's malloc serves from its per-thread
    /// cache (at most 1,032 bytes), and frees there; 1,024 took its slow path on the transfer
    /// loop, about 1 k instructions per response and a consolidation of its free lists.
    static let headerBlockCapacity = 960
    /// The system's CAs: Debian's `/etc/ssl/certs`, certificates by subject
    /// hash (`update-ca-certificates` keeps it, with the same CAs as its
    /// bundle file there), from which OpenSSL reads only the issuers a
    /// handshake asks for (see `CertificateStore`).
    public static let systemCABundle = "/etc/ssl/certs"
    /// A `--cacert` file is checked for a PEM block in its first 16 MiB (a CA
    /// bundle is a few hundred KiB), read this many bytes at a time.
    public static let maxCAFileScan = 16 << 20
    static let caFileReadBytes = 64 * 1024
    /// The TLS 1.3 cipher suites offered, in browsers' order (Chrome's; Firefox
    /// also puts AES-128-GCM first): OpenSSL 3.0's own three, with
    /// `TLS_AES_128_GCM_SHA256` (TLS 1.3's mandatory suite, RFC 8446 9.1) first
    /// instead of `TLS_AES_256_GCM_SHA384`. A server that takes the client's
    /// order (nginx's default, `ssl_prefer_server_ciphers off`) then agrees on
    /// it: a key schedule over SHA-256 and 10 AES rounds a block, not SHA-384
    /// and 14, about 2 % of the instructions of the bench's HTTPS run
    /// (bench/history/internet.md "Session 21: HTTPS CPU"). A server with an order of its
    /// own still picks by it; TLS 1.2's list is OpenSSL's default, untouched.
    static let tls13CipherSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
    /// Hosts a transfer loop remembers as failing to complete a connection,
    /// whose new transfers do not wait to share one (CURLOPT_PIPEWAIT); past
    /// this many the memory starts afresh.
    public static let unconnectedHostsRemembered = 4096
    /// libcurl share handles per transfer loop that keep TLS sessions
    /// (`TLSSessionShares`). libcurl 7.88 keeps 8 sessions in each, so a loop
    /// keeps the sessions of up to 8 times this many https hosts, for a
    /// reconnection to resume (an abbreviated handshake).
    public static let tlsSessionShares = 32
    /// The content codings offered (`Accept-Encoding`) and undone by `ContentDecoder`
    /// (the offer libcurl 7.88 made for `CURLOPT_ACCEPT_ENCODING ""`).
    public static let acceptEncoding = "deflate, gzip, br, zstd"
    /// Content codings stacked on one body that are undone, at most (libcurl's limit too).
    public static let maxContentCodings = 5
    /// Idle connections a client keeps for reuse, over all its transfer
    /// loops, when that is more than twice `maxConnections`: about one for
    /// each host a batch has work for. A host's next URL often comes after a
    /// round of the other hosts, and libcurl closes the connection idle
    /// longest when its cache is full: on issue 21's preset (502 hosts,
    /// `--jobs 64`) a cache of 128 made 1,911 connections for 5,170 requests,
    /// one of 512 made 597 and took 30 % less CPU. With 1,000 hosts (the
    /// HTTPS preset's 10,000 URLs, `--jobs 256`) 512 still evicted: 2,066
    /// connections, each a full TLS handshake (libcurl 7.88 keeps 8 TLS
    /// sessions); 2,048 made 1,577, and at 10,000 hosts (plain) 40,171
    /// instead of 54,695, with the same peak RSS (98 and 55 MB). At most a
    /// quarter of the process's open-file limit (`TransferLoops.connectionCache`).
    public static let idleConnections = 2048
    /// Seconds a transfer loop trusts a DNS answer (libcurl's own default;
    /// see `DNSCacheExpiry` for how its cache is pruned without a walk per transfer).
    public static let dnsAnswerLifetime = 60
    /// Transfer loops of a `FetchClient` (`FetchConfiguration.transferLoops`):
    /// one per core the process may run on (its CPU affinity, so a cpuset or
    /// `taskset` counts), each a thread with its own multi handle, so
    /// libcurl's work is not bound to one core (issue 22). At most
    /// `maxTransferLoops`: past a few cores the loops are idle while the
    /// per-loop costs (a thread, a CA store, a connection pool) remain.
    public static let transferLoops: Int = min(maxTransferLoops, CurlGlobal.usableCores)
    /// The most transfer loops a client starts, whatever the configuration asks.
    public static let maxTransferLoops = 8
    /// Completion workers of a `FetchClient` (`FetchConfiguration.completionWorkers`):
    /// one per core the process may run on, threads "cache-worker-N" that
    /// run a finished transfer's file work (its body handed to the sink, the
    /// caller's completion: for a cache load the validation, commit and
    /// result) off the transfer loop, which a busy host keeps to itself
    /// (issue 22). At most `maxCompletionWorkers`.
    public static let completionWorkers: Int = min(maxCompletionWorkers, CurlGlobal.usableCores)
    /// The most completion workers a client starts, whatever the configuration asks.
    public static let maxCompletionWorkers = 8
    /// Jobs waiting for the completion workers (all of them together) above
    /// which work a fetch hands off after giving its slot back
    /// (`FetchHandle.handOff`: a 304's record update and result, about 5 KiB
    /// each with its exchange, sink, transfer and header block) runs on its
    /// transfer loop instead: no slot bounds how many such jobs wait, so this
    /// does (512: about 2.5 MiB).
    public static let completionBacklogLimit = 512
    /// Buffers a large body streamed by `FetchClient.start` may have on their
    /// way to its completion worker (`StreamHandoff`), each at most
    /// `receiveBufferSize` (libcurl's 16 KiB chunks joined while the worker
    /// lags): past them the transfer pauses until the worker gives
    /// `streamBuffersToResume` back. Memory per such transfer: this times
    /// 64 KiB (192 KiB; 48 MiB for `--jobs 256` bodies all streaming to a
    /// worker that lags, the worst case).
    public static let streamBuffers = 3
    /// Buffers back from the worker before a paused transfer resumes: one
    /// would let a single 16 KiB chunk through per pause, each pause costing
    /// libcurl a copy of the data it holds and the loop a wake-up (issue 22:
    /// 4,112 pauses for 200 MiB with one; see bench/README).
    public static let streamBuffersToResume = 2
    /// How long the loop thread waits at most when nothing happens (its epoll
    /// set: `CurlLoop`); any submission or cancellation wakes it at once, and
    /// libcurl's timer sooner when due. The bound also paces the stall sweep.
    public static let pollTimeoutMs: Int32 = 1000
}
