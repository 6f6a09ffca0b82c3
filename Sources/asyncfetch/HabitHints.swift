/// One-line answers for the options curl, wget and aria2c users type by
/// habit (docs/habits.md, "asyncfetch for curl and wget users"): the equivalent
/// option, "always on", or "not supported, because …". Without them such an
/// option got a bare "Unknown option", or swift-argument-parser's nearest
/// spelling (`--fail` → `--any`, `--user` → `--json`), which is wrong.
///
/// Only names that are not asyncfetch options are here; a hinted option is a
/// usage error (exit 2) whose message is the answer.
enum HabitHints {
    static let answers: [String: String] = {
        var table: [String: String] = [:]
        for (names, answer) in rows {
            for name in names { table[name] = answer }
        }
        return table
    }()

    /// The answer for an option name as typed (`-k`, `--max-time`), if it is a habit.
    static func answer(for name: String) -> String? {
        guard let answer = answers[name] else { return nil }
        return "\(name): \(answer)"
    }

    static let rows: [([String], String)] = [
        (["-k"], "use --insecure (TLS certificates are then not verified)"),
        (["--no-check-certificate"], "use --insecure (TLS certificates are then not verified)"),
        (["--check-certificate"], "always on: TLS certificates are verified (--insecure turns the checks off)"),
        (["--ca-certificate"], "use --cacert FILE"),
        (["-s", "--silent", "-nv", "--no-verbose"], "use -q (print only failures); the progress bar shows only on a terminal (--no-progress turns it off)"),
        (["-S", "--show-error"], "always on: every failure is printed, with its reason"),
        (["-L", "--location"], "always on: redirects are followed (at most 10, http and https only)"),
        (["--max-redirs", "--max-redirect"], "not supported, because redirects are always followed, at most 10 (http and https only)"),
        (["-f", "--fail", "--fail-with-body"], "always on: an HTTP 4xx/5xx is a failure and the exit status is 1"),
        (["--remote-name", "--remote-name-all"], "use -O (every URL into the current directory, named after its last path segment) or -P DIR"),
        (["-J", "--remote-header-name"], "not supported, because a name chosen by the server is not safe to trust; names come from the URL, --name or 'URL<TAB>name' lines"),
        (["--create-dirs"], "always on: -P creates the directories a --name template asks for"),
        (["-C", "--continue-at", "-c", "--continue"], "always on: a transfer cut off after 1 MiB keeps its partial body, and the next run asks for the rest"),
        (["--compressed"], "always on: asyncfetch asks for gzip, deflate, br and zstd and the cache holds the decoded body"),
        (["-u", "--user", "--http-user", "--http-password"], "put the credentials in the URL (https://user:pass@host/…) or use -H 'Authorization: …'"),
        (["--netrc", "-n"], "not supported, because credentials are read only from the URL or an Authorization header (-H)"),
        (["-m", "--max-time", "--read-timeout"], "use --timeout DURATION (per attempt; e.g. 30, 90s, 5m)"),
        (["--dns-timeout"], "use --connect-timeout DURATION (name lookup included; e.g. 10, 30s)"),
        (["--retry-connrefused", "--retry-all-errors"], "always on: connect errors, timeouts, 408, 429 and 5xx are retried (--retries N, default 2)"),
        (["-T"], "use --timeout DURATION (per attempt; e.g. 30, 90s, 5m)"),
        (["--retry", "-t", "--tries", "--max-tries"], "use --retries N (extra attempts after the first; default 2)"),
        (["--retry-delay", "--retry-max-time", "--waitretry", "--retry-wait"], "not supported, because the backoff is automatic: exponential with jitter, honouring Retry-After"),
        (["--max-filesize"], "use --max-size SIZE (e.g. 64M; the default)"),
        (["-Z", "--parallel"], "always on: URLs are fetched in parallel (--jobs N sets how many at once)"),
        (["--parallel-max", "-j", "--max-concurrent-downloads"], "use --jobs N"),
        (["--parallel-max-host", "--max-connection-per-server"], "use --jobs-per-host N (default 6; fewer while a host answers 429)"),
        (["-N", "--timestamping", "-z", "--time-cond"], "always on: fresh copies are reused and stale ones revalidated (--refresh asks the server anyway)"),
        (["-w", "--write-out"], "use --json (one JSON object per phase change, then a summary)"),
        (["-#", "--progress-bar"], "use --progress (a bar on stderr; on by default on a terminal)"),
        (["--no-progress-meter"], "use --no-progress"),
        (["-x"], "not supported as an option, because proxies come from http_proxy, https_proxy and no_proxy; set those (aria2's -x N is --jobs-per-host N)"),
        (["--proxy", "-e", "--execute", "--all-proxy", "--http-proxy", "--https-proxy"], "not supported as an option, because proxies come from http_proxy, https_proxy and no_proxy; set those"),
        (["-X", "--request", "-d", "--data", "-F", "--form", "--post-data"], "not supported, because asyncfetch only downloads (GET); aria2's -d DIR is -P DIR"),
        (["-I", "--head", "--spider"], "not supported, because a HEAD request has no body to cache; --offline shows what is stored"),
        (["-A", "-U"], "use --user-agent STRING"),
        (["--referer"], "use -H 'Referer: …'"),
        (["-b", "--cookie"], "use -H 'Cookie: …' (response cookies are never stored)"),
        (["-r", "--range"], "not supported, because the cache keeps whole bodies (wget's -r: asyncfetch does not crawl; list the URLs with -i FILE)"),
        (["--recursive", "--mirror", "-np", "--no-parent"], "not supported, because asyncfetch does not crawl: it fetches the URLs it is given (list them with -i FILE)"),
        (["-nd", "--no-directories", "-nH", "--no-host-directories"], "always on: files go straight into -P DIR (only a --name template with '/' makes folders, e.g. '{host}/{path}')"),
        (["--limit-rate"], "not supported, because asyncfetch does not throttle; lower --jobs to ease the load"),
        (["--wait", "--random-wait"], "not supported, because asyncfetch does not pace requests: --jobs-per-host N bounds each host (default 6), and a host that answers 429 or 503 is paused"),
        (["-4", "-6", "--ipv4", "--ipv6", "--inet4-only", "--inet6-only"], "not supported, because the system resolver picks the address (write the address in the URL to choose one)"),
        (["--split"], "not supported, because each URL is one transfer (--jobs N runs many URLs at once)"),
        (["-K", "--config"], "use -i FILE: one URL per line, or 'URL<TAB>name' to name its file in -P DIR"),
        (["-nc", "--no-clobber"], "not supported, because -P replaces its own files on each run (the same URL, the same name)"),
        (["--http2", "--http1.1"], "always on: HTTP/2 where the server offers it, else HTTP/1.1"),
        (["--output-document"], "use -o FILE"),
        (["--directory-prefix", "--dir"], "use -P DIR (--output-dir DIR)"),
        (["--out"], "use -o FILE for one URL, or 'URL<TAB>name' lines in -i FILE with -P DIR"),
        (["--input-file"], "use -i FILE (--input FILE)"),
    ]
}
