import ImageFormats

/// One-line answers for the options curl, wget and aria2c users type by
/// habit (docs/habits.md, "asyncfetch for curl and wget users"): the equivalent
/// option, "always on", or "not supported, because …". Without them such an
/// option got a bare "Unknown option", or swift-argument-parser's nearest
/// spelling (`--fail` → `--any`, `--user` → `--json`), which is wrong.
///
/// Only names that are not asyncfetch options are here; a hinted option is a
/// usage error (exit 2) whose message is the answer. Pure data and text:
/// the tool's parser asks (`answer(for:)`), and says what it is told.
public enum HabitHints {
    static let answers: [String: String] = {
        var table: [String: String] = [:]
        for (names, answer) in rows {
            for name in names { table[name] = answer }
        }
        return table
    }()

    /// The answer for an option name as typed (`-k`, `--max-time`), if it is a habit.
    public static func answer(for name: String) -> String? {
        guard let answer = answers[name] else { return nil }
        return "\(name): \(answer)"
    }

    static let rows: [([String], String)] = [
        (["-k"], "curl's -k (--insecure): use --insecure (TLS certificates are then not verified); wget's -k (--convert-links) and aria2's -k (--min-split-size) do not apply: asyncfetch saves no pages and does not split a download"),
        (["--no-check-certificate"], "use --insecure (TLS certificates are then not verified)"),
        (["--check-certificate"], "always on: TLS certificates are verified (--insecure turns the checks off)"),
        (["--ca-certificate"], "use --cacert FILE"),
        (["--capath", "--ca-directory"], "use --cacert FILE (one PEM file, which may hold many certificates; a folder of them is not read)"),
        (["--cert", "--key", "--certificate", "--private-key"], "not supported, because asyncfetch sends no TLS client certificate"),
        (["-E"], "curl's -E (--cert): not supported, because asyncfetch sends no TLS client certificate; wget's -E (--adjust-extension): not supported, because names come from the URL, --name or 'URL<TAB>name' lines"),
        (["-V"], "curl's and wget's -V (--version): use --version; aria2's -V (--check-integrity): always on: a hit's length is checked against its metadata, and asyncfetch cache verify checks every digest"),
        (["--url"], "name each URL as an argument (or list them in a file: -i FILE)"),
        (["-s"], "curl's -s (--silent): use -q (print only failures; the progress bar shows only on a terminal, --no-progress turns it off); aria2's -s N (--split): not supported, because each URL is one transfer (--jobs N runs many URLs at once)"),
        (["--silent", "-nv", "--no-verbose"], "use -q (print only failures); the progress bar shows only on a terminal (--no-progress turns it off)"),
        (["-S"], "curl's -S (--show-error): always on: every failure is printed, with its reason; wget's -S (--server-response): use -v (protocol, status, content type, timings)"),
        (["--show-error"], "always on: every failure is printed, with its reason"),
        (["--server-response", "-D", "--dump-header", "--include"], "use -v (protocol, status, content type, attempts, timings) or --json; the response headers themselves are not printed"),
        (["-L"], "curl's -L (--location): always on: redirects are followed (at most 10, http and https only); wget's -L (--relative): not supported, because asyncfetch does not crawl (list the URLs with -i FILE)"),
        (["--location"], "always on: redirects are followed (at most 10, http and https only)"),
        (["--max-redirs", "--max-redirect"], "not supported, because redirects are always followed, at most 10 (http and https only)"),
        (["-f", "--fail", "--fail-with-body"], "always on: an HTTP 4xx/5xx is a failure and the exit status is 1"),
        (["--remote-name", "--remote-name-all"], "use -O (every URL into the current directory, named after its last path segment) or -P DIR"),
        (["-J", "--remote-header-name", "--content-disposition"], "not supported, because a name chosen by the server is not safe to trust; names come from the URL, --name or 'URL<TAB>name' lines"),
        (["--create-dirs"], "always on: -P creates the directories a --name template asks for"),
        (["-C", "--continue-at", "--continue"], "always on: a transfer cut off after 1 MiB keeps its partial body, and the next run asks for the rest"),
        (["-c"], "wget's and aria2's -c (--continue): always on: a transfer cut off after 1 MiB keeps its partial body, and the next run asks for the rest; curl's -c (--cookie-jar): not supported, because response cookies are never stored"),
        (["--compressed"], "always on: asyncfetch asks for gzip, deflate, br and zstd and the cache holds the decoded body"),
        (["-u", "--user", "--http-user", "--http-password"], "put the credentials in the URL (https://user:pass@host/…) or use -H 'Authorization: …'"),
        (["--netrc"], "not supported, because credentials are read only from the URL or an Authorization header (-H)"),
        (["-n"], "curl's -n (--netrc): not supported, because credentials are read only from the URL or an Authorization header (-H); aria2's -n (--no-netrc): always on"),
        (["--max-time", "--read-timeout"], "use --timeout DURATION (per attempt; e.g. 30, 90s, 5m)"),
        (["-m"], "curl's -m (--max-time): use --timeout DURATION (per attempt; e.g. 30, 90s, 5m); wget's -m (--mirror): not supported, because asyncfetch does not crawl; aria2's -m N (--max-tries): use --retries N-1"),
        (["--dns-timeout"], "use --connect-timeout DURATION (name lookup included; e.g. 10, 30s)"),
        (["--retry-connrefused", "--retry-all-errors"], "always on: connect errors, timeouts, 408, 429 and 5xx are retried (--retries N, default 2)"),
        (["-T"], "wget's -T (--timeout): use --timeout DURATION (per attempt; e.g. 30, 90s, 5m); curl's -T (--upload-file): not supported, because asyncfetch only downloads"),
        (["-t"], "wget's -t N (--tries): use --retries N-1 (extra attempts after the first; default 2); aria2's -t (--timeout): use --timeout DURATION"),
        (["--retry", "--tries", "--max-tries"], "use --retries N (extra attempts after the first; default 2)"),
        (["--retry-delay", "--retry-max-time", "--waitretry", "--retry-wait"], "not supported, because the backoff is automatic: exponential with jitter, honouring Retry-After"),
        (["--max-filesize"], "use --max-size SIZE (e.g. 64M; the default)"),
        (["--parallel"], "always on: URLs are fetched in parallel (--jobs N sets how many at once)"),
        (["-Z"], "curl's -Z (--parallel): always on: URLs are fetched in parallel (--jobs N sets how many at once); aria2's -Z (--force-sequential): use --jobs 1"),
        (["--parallel-max", "--max-concurrent-downloads"], "use --jobs N"),
        (["-j"], "aria2's -j N (--max-concurrent-downloads): use --jobs N; curl's -j (--junk-session-cookies): always on, because cookies are never stored"),
        (["--parallel-max-host", "--max-connection-per-server"], "use --jobs-per-host N (default 6; fewer while a host answers 429)"),
        (["--timestamping", "-z", "--time-cond"], "always on: fresh copies are reused and stale ones revalidated (--refresh asks the server anyway)"),
        (["-N"], "wget's -N (--timestamping): always on: fresh copies are reused and stale ones revalidated (--refresh asks the server anyway); curl's -N (--no-buffer): not supported, because a body is written out once it is complete and checked"),
        (["-w"], "curl's -w (--write-out): use --json (one JSON object per phase change, then a summary); wget's -w (--wait): not supported, because asyncfetch does not pace requests (--jobs-per-host N bounds each host, and a host that answers 429 or 503 is paused)"),
        (["--write-out"], "use --json (one JSON object per phase change, then a summary)"),
        (["-#", "--progress-bar", "--show-progress"], "use --progress (a bar on stderr; on by default on a terminal)"),
        (["--no-progress-meter"], "use --no-progress"),
        (["-x"], "curl's -x (--proxy): not supported as an option, because proxies come from http_proxy, https_proxy and no_proxy; set those; aria2's -x N (--max-connection-per-server): use --jobs-per-host N; wget's -x (--force-directories): use -P DIR --name '{host}/{path}'"),
        (["--proxy", "--execute", "--all-proxy", "--http-proxy", "--https-proxy"], "not supported as an option, because proxies come from http_proxy, https_proxy and no_proxy; set those"),
        (["-e"], "curl's -e (--referer): use -H 'Referer: …'; wget's -e (--execute): not supported, because settings are options (proxies come from http_proxy, https_proxy and no_proxy)"),
        (["-X", "--request", "--data", "-F", "--form", "--post-data"], "not supported, because asyncfetch only downloads (GET)"),
        (["-d"], "curl's -d (--data): not supported, because asyncfetch only downloads (GET); aria2's -d DIR (--dir): use -P DIR; wget's -d (--debug): use -v"),
        (["-I", "--head", "--spider"], "not supported, because a HEAD request has no body to cache; --offline shows what is stored"),
        (["-A"], "curl's -A (--user-agent): use --user-agent STRING; wget's -A (--accept): not supported, because asyncfetch does not crawl"),
        (["-U"], "wget's and aria2's -U (--user-agent): use --user-agent STRING; curl's -U (--proxy-user): put the credentials in the proxy variable (http_proxy=http://user:pass@proxy:3128)"),
        (["--referer"], "use -H 'Referer: …'"),
        (["--cookie"], "use -H 'Cookie: …' (response cookies are never stored)"),
        (["-b"], "curl's -b (--cookie): use -H 'Cookie: …' (response cookies are never stored); wget's -b (--background): run asyncfetch in the background with the shell (… &, or nohup)"),
        (["-r", "--range"], "not supported, because the cache keeps whole bodies (wget's -r: asyncfetch does not crawl; list the URLs with -i FILE)"),
        (["--recursive", "--mirror", "-np", "--no-parent"], "not supported, because asyncfetch does not crawl: it fetches the URLs it is given (list them with -i FILE)"),
        (["-nd", "--no-directories", "-nH", "--no-host-directories"], "always on: files go straight into -P DIR (only a --name template with '/' makes folders, e.g. '{host}/{path}')"),
        (["--limit-rate"], "not supported, because asyncfetch does not throttle; lower --jobs to ease the load"),
        (["--wait", "--random-wait"], "not supported, because asyncfetch does not pace requests: --jobs-per-host N bounds each host (default 6), and a host that answers 429 or 503 is paused"),
        (["-4", "-6", "--ipv4", "--ipv6", "--inet4-only", "--inet6-only"], "not supported, because the system resolver picks the address (write the address in the URL to choose one)"),
        (["--split"], "not supported, because each URL is one transfer (--jobs N runs many URLs at once)"),
        (["-K", "--config"], "use -i FILE: one URL per line, or 'URL<TAB>name' to name its file in -P DIR"),
        (["-nc", "--no-clobber"], "not supported, because -P replaces its own files on each run (the same URL, the same name)"),
        (["--http2"], "always on over https: HTTP/2 where the server offers it, else HTTP/1.1 (plain http is HTTP/1.1)"),
        (["--http1.1", "--http1.0", "--http2-prior-knowledge", "--http3"], "not supported, because the HTTP version is not chosen by hand: HTTP/2 where an https server offers it, else HTTP/1.1"),
        (["--output-document"], "use -o FILE"),
        (["--directory-prefix", "--dir"], "use -P DIR (--output-dir DIR)"),
        (["--out"], "use -o FILE for one URL, or 'URL<TAB>name' lines in -i FILE with -P DIR"),
        (["--input-file"], "use -i FILE (--input FILE)"),
        (["--output-file", "--append-output"], "not supported as an option, because the report goes to standard output and standard error: redirect them (> FILE 2>&1, or >> FILE 2>&1 to append)"),
        (["-a"], "wget's -a LOGFILE (--append-output): not supported as an option, because the report goes to standard output and standard error: redirect them (>> FILE 2>&1); curl's -a (--append): not supported, because asyncfetch only downloads"),
    ]
}

extension HabitHints {
    /// wget's `-o LOGFILE` (a log of the run), typed as asyncfetch's `-o FILE`
    /// (curl's: the body): a file whose name says it is a log (`logName`).
    /// The run goes on as asked (the body goes there); this says how to get
    /// the log instead.
    public static func logFile(output: String?) -> String? {
        guard let output, logName(output) else { return nil }
        return "wget's -o LOGFILE, a log of the run, is a redirection here: > \(output) 2>&1"
    }

    /// Whether the last name of `path` says it is a log: `log`, `logs` or
    /// `logfile` one of the words it is made of, split at `.`, `-` and `_`
    /// (`run.log`, `run.log.1`, `log.txt`, wget's own `wget-log`; not
    /// `catalog.txt` or `blog`), and it does not end as an image's name
    /// (`log.png` is a picture of one).
    static func logName(_ path: String) -> Bool {
        let name = path.split(separator: "/").last.map { $0.lowercased() } ?? ""
        let words = name.split { $0 == "." || $0 == "-" || $0 == "_" }
        guard words.contains(where: { $0 == "log" || $0 == "logs" || $0 == "logfile" }) else { return false }
        guard let dot = name.lastIndex(of: ".") else { return true }
        return !imageExtensions.contains(String(name[name.index(after: dot)...]))
    }

    /// The endings of image file names (`ImageFormat`'s, and their other spellings).
    static let imageExtensions = Set(ImageFormat.all.flatMap { [$0.fileExtension, $0.name] } + ["jpe", "tif", "heic"])
}
