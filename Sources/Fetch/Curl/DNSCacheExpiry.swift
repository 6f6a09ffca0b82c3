/// When a transfer loop's DNS cache drops old answers.
///
/// libcurl 7.88 prunes its DNS cache at the end of every transfer whose
/// CURLOPT_DNS_CACHE_TIMEOUT is not -1, and the prune walks every entry
/// (`Curl_hostcache_prune` in lib/hostip.c): with thousands of hosts that
/// walk, once per URL, was 13 % of the CPU of 100,000 URLs over 10,000
/// hosts. With -1 it neither walks nor checks an entry's age on lookup, so
/// an answer would be kept for the whole run: a run of hours would go on
/// connecting to an address its name no longer has.
///
/// So transfers run with -1, and once per `lifetime` the transfers that
/// start run with `lifetime`: each drops a stale answer for its own name
/// when it looks it up, and the first of them to end walks the cache once
/// and drops every answer older than `lifetime` (libcurl's own rule). An
/// answer is then used at most about twice `lifetime` after its lookup.
/// (A transfer that ends while its HTTP/2 connection carries others does
/// not prune: the next one due does.)
///
/// A value owned by the loop thread; `now` is `monotonicSeconds()`.
struct DNSCacheExpiry {
    /// Seconds an answer is trusted (libcurl's own default is 60).
    let lifetime: Int
    /// When the next prune is due.
    private var due: Double

    init(lifetime: Int, now: Double) {
        self.lifetime = max(1, lifetime)
        due = now + Double(self.lifetime)
    }

    /// CURLOPT_DNS_CACHE_TIMEOUT for a transfer starting at `now`: -1
    /// (no walk, no age check) unless a prune is due.
    func timeout(now: Double) -> Int {
        now >= due ? lifetime : -1
    }

    /// A transfer that started with `timeout` has ended: if it pruned, the next prune is one `lifetime` away.
    mutating func ended(timeout: Int, now: Double) {
        if timeout != -1 && now >= due { due = now + Double(lifetime) }
    }
}
