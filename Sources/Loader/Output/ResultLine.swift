import Fetch
import ImageFormats
import Support

/// SPEC §3's lines for a batch's events: the human line per URL, the JSON
/// object per phase change, and the summary in both forms. Pure text, no
/// I/O: the tool writes these under its lock; a Swift program that runs a
/// `LoadBatch` gets the same lines from the same code.
///
/// Built as bytes: with 10,000 cache hits, string building was a large
/// share of a run.
public struct ResultLine: Sendable {
    /// ANSI colours on the `success`/`failure`/`empty` word.
    public let color: Bool
    /// `-v`: the HTTP detail in brackets.
    public let verbose: Bool
    /// `-q`: no success lines.
    public let quiet: Bool
    /// Pad the URL column to one width (for a terminal: see `appendURLColumn`).
    public let alignURLs: Bool

    public init(color: Bool = false, verbose: Bool = false, quiet: Bool = false, alignURLs: Bool = false) {
        self.color = color
        self.verbose = verbose
        self.quiet = quiet
        self.alignURLs = alignURLs
    }

    /// `urlColumn` is the URL column's width so far (`appendURLColumn`).
    /// `success  URL  PATH  (network, 153 B, png 64x48)`, `failure  URL
    /// MESSAGE`, `empty    URL  not cached`, appended to `line`; false (and
    /// nothing appended) for `loading` and, with `-q`, for successes. The
    /// outcome of a background refresh (`stale-while-revalidate`) is a
    /// `refresh  URL  …` line after the URL's own. `-v`
    /// appends the HTTP detail in brackets.
    public func human(_ event: LoadEvent, urlColumn: inout Int, into line: inout [UInt8]) -> Bool {
        LineBytes.build(into: &line) { human(event, urlColumn: &urlColumn, into: &$0) }
    }

    /// Why a URL is `empty`, for people: what is (or is not) stored.
    private static func appendWhy(_ reason: EmptyReason, to line: inout LineBytes) {
        switch reason {
        case .notCached: line.append(literal: "not cached")
        case .storedForOtherHeaders(let vary):
            line.append(literal: "not cached for these request headers: stored for others (Vary: ")
            line.appendShown(vary.joined(separator: ", "))
            line.append(literal: ")")
        case .staleError(let status):
            line.append(literal: "not cached: a remembered ")
            line.append(String(status))
            line.append(literal: " is stale, and an error is never served stale")
        case .broken(let problem): line.appendShown(EmptyReason.brokenSentence(problem))
        case .cancelled: line.append(literal: "cancelled before it started")
        }
    }

    private func human(_ event: LoadEvent, urlColumn: inout Int, into line: inout LineBytes) -> Bool {
        switch event.phase {
        case .loading:
            return false
        case .empty(let reason):
            paint("empty  ", "33", into: &line)
            appendURLColumn(event.url, column: &urlColumn, to: &line)
            Self.appendWhy(reason, to: &line)
        case .failure(let error) where event.refreshed:
            if quiet { return false }
            paint("refresh", "33", into: &line)
            appendURLColumn(event.url, column: &urlColumn, to: &line)
            line.append(literal: "background revalidation failed: ")
            line.appendShown(error.message)
            line.append(literal: "; the stored copy stays")
            appendFailureDetail(error, duration: event.duration, to: &line)
        case .failure(let error):
            paint("failure", "31", into: &line)
            appendURLColumn(event.url, column: &urlColumn, to: &line)
            line.appendShown(error.message)
            if error.source == .cache && error.kind == .http { line.append(literal: " (remembered)") }
            appendFailureDetail(error, duration: event.duration, to: &line)
        case .success(let result):
            if quiet { return false }
            if event.refreshed { paint("refresh", "32", into: &line) } else { paint("success", "32", into: &line) }
            appendURLColumn(event.url, column: &urlColumn, to: &line)
            if let stored = result.stored {
                line.appendShown(stored)
            } else {
                line.append(literal: result.storeFailure == nil ? "(not stored: no-store)" : "(not stored: the cache could not be written)")
            }
            line.append(literal: "  (")
            line.append(result.source.rawValue)
            line.append(literal: ", ")
            if let reason = result.reason {
                line.append(reason)
                line.append(literal: ", ")
            }
            HumanUnits.appendBytes(result.bytes, to: &line)
            if let format = result.format {
                line.append(literal: ", ")
                line.append(format.name)
                if let w = result.width, let h = result.height {
                    line.append(0x20)
                    HumanUnits.appendDecimal(Int64(w), to: &line)
                    line.append(0x78)   // x
                    HumanUnits.appendDecimal(Int64(h), to: &line)
                }
            } else if let type = result.contentType {
                line.append(literal: ", ")
                line.appendShown(type)
            }
            line.append(0x29)   // )
            if let receipt = result.receipt {
                line.append(literal: "  -> ")
                line.appendShown(receipt.path)
                if verbose {
                    line.append(literal: " (")
                    line.append(receipt.method)
                    if let note = receipt.note {
                        line.append(literal: "; ")
                        line.append(note)
                    }
                    line.append(0x29)   // )
                }
            }
            if verbose {
                line.append(literal: "  [")
                line.appendShown(httpDetail(result, duration: event.duration))
                line.append(0x5D)   // ]
            }
        }
        return true
    }

    /// `  URL  `, the URL padded to the widest one so far when the lines go
    /// to a terminal (`alignURLs`; at most `Defaults.urlColumnMax`), so the
    /// next column starts in one place. A pipe or file gets single gaps, as
    /// before: scripts that split on two spaces see no change.
    public func appendURLColumn(_ url: String, column urlColumn: inout Int, to line: inout [UInt8]) {
        _ = LineBytes.build(into: &line) { appendURLColumn(url, column: &urlColumn, to: &$0); return true }
    }

    private func appendURLColumn(_ url: String, column urlColumn: inout Int, to line: inout LineBytes) {
        line.append(0x20); line.append(0x20)
        line.appendShown(url)
        line.append(0x20); line.append(0x20)
        guard alignURLs else { return }
        let width = url.count
        if width > urlColumn { urlColumn = min(width, Defaults.urlColumnMax) }
        if width < urlColumn { line.appendSpaces(urlColumn - width) }
    }

    /// `-v`: `  [timeout, attempts 3, 31.2 s]` after a failure's message
    /// (a background refresh's too).
    private func appendFailureDetail(_ error: LoadError, duration: Double, to line: inout LineBytes) {
        guard verbose else { return }
        var detail = [error.kind.rawValue]
        if error.attempts > 0 { detail.append("attempts \(error.attempts)") }
        if let reached = error.effectiveURL { detail.append("after redirects, at \(ShownText.of(redactURL(reached)))") }
        detail.append(HumanUnits.duration(duration))
        line.append(literal: "  [")
        line.append(detail.joined(separator: ", "))
        line.append(literal: "]")
    }

    private func httpDetail(_ result: LoadResult, duration: Double) -> String {
        var http: [String] = []
        if let status = result.status {
            // A body served from storage (a hit, a stale or --offline copy, the remote tier) has the
            // stored response's status, not one of this run's: `stored 200`, never a protocol it did not use.
            http.append(result.httpVersion.map { "HTTP/\($0) \(status)" } ?? "stored \(status)")
        }
        if let type = result.contentType { http.append(type) }
        if result.attempts > 0 { http.append("attempts \(result.attempts)") }
        if let kept = result.resumedFrom { http.append("resumed after \(HumanUnits.bytes(kept)) kept") }
        if result.redirects > 0 {
            var text = "redirects \(result.redirects)"
            if let final = result.effectiveURL { text += " to \(redactURL(final))" }
            http.append(text)
        }
        http.append(HumanUnits.duration(duration))
        return http.joined(separator: ", ")
    }

    private func paint(_ text: StaticString, _ code: StaticString, into line: inout LineBytes) {
        if color {
            line.append(literal: "\u{1B}[")
            line.append(literal: code)
            line.append(literal: "m")
        }
        line.append(literal: text)
        if color { line.append(literal: "\u{1B}[0m") }
    }

    /// One object per phase change, fields in SPEC §3's order.
    public static func json(_ event: LoadEvent) -> JSONLine {
        JSONLine { json(event, into: &$0) }
    }

    /// `json(event)`'s object after `line`'s bytes, written in place (no
    /// `JSONLine` of its own: this is the tool's `--json` line per event).
    static func json(_ event: LoadEvent, into line: inout [UInt8]) {
        _ = LineBytes.build(into: &line) { bytes in
            var object = JSONFields(opening: bytes)
            json(event, into: &object)
            object.close()
            bytes = object.sink
            return true
        }
    }

    private static func json<Sink: ByteSink>(_ event: LoadEvent, into line: inout JSONFields<Sink>) {
        line.add("url", event.url)
        line.add("phase", event.refreshed ? "refreshed" : event.phase.name)
        switch event.phase {
        case .loading:
            break
        case .empty(let reason):
            line.add("reason", reason.rawValue)
            switch reason {
            case .storedForOtherHeaders(let vary): line.add("vary", vary)
            case .staleError(let status): line.add("staleStatus", status)
            case .broken(let problem): line.add("broken", problem)
            case .notCached, .cancelled: break
            }
        case .success(let result):
            line.add("source", result.source.rawValue)
            line.add("reason", result.reason)
            line.add("path", result.stored)
            line.add("bytes", result.bytes)
            line.add("status", result.status)
            line.add("contentType", result.contentType)
            line.add("format", result.format?.name)
            line.add("width", result.width)
            line.add("height", result.height)
            line.add("checked", result.checked?.rawValue)
            line.add("attempts", result.attempts)
            line.add("resumedFrom", result.resumedFrom)
            if result.redirects > 0 { line.add("effectiveUrl", result.effectiveURL.map(redactURL)) }
            line.add("output", result.receipt?.path)
            line.add("outputMethod", result.receipt?.method)
            if result.storeFailure != nil { line.add("stored", false) }
            line.add("durationMs", milliseconds: event.duration)
        case .failure(let error):
            var e = JSONLine()
            e.add("kind", error.kind.rawValue)
            e.add("status", error.status)
            e.add("message", error.message)
            line.add("error", object: e)
            line.add("source", error.source?.rawValue)
            line.add("attempts", error.attempts)
            line.add("effectiveUrl", error.effectiveURL.map(redactURL))
            line.add("durationMs", milliseconds: event.duration)
        }
    }

    /// `12 URLs: 11 success, 1 failure, 0 empty (cache 3, network 8,
    /// revalidated 0, stale 0); 1.2 MiB in 1.25 s`, plus the remote tier's
    /// counts when it was used (and, when it was turned off or its uploads
    /// stopped, why).
    public static func summaryText(_ s: BatchTotals, duration: Double) -> String {
        let parts = ["\(s.success) success", "\(s.failure) failure", "\(s.empty) empty"]
        var sources = "cache \(s.cache), network \(s.network), revalidated \(s.revalidated), stale \(s.stale)"
        var tier = ""
        if let r = s.remoteTier {
            sources += ", remote \(s.remote)"
            tier = "; remote cache: \(r.hits) hits, \(r.misses) misses, \(r.uploads) uploads, \(r.errors) errors"
            // Why it was given up, or its uploads stopped: the warning may be long gone from the screen.
            if let reason = r.reason {
                tier += r.disabled ? ", turned off: \(reason)" : ", uploads stopped: \(reason)"
            }
        }
        if let h = s.hosts, h.hostsPaused > 0 || h.hostsGivenUp > 0 {
            tier += "; hosts: \(h.hosts), \(h.hostsPaused) paused, \(h.hostsGivenUp) given up"
        }
        let noun = s.total == 1 ? "URL" : "URLs"
        return "\(s.total) \(noun): \(parts.joined(separator: ", ")) (\(sources)); \(HumanUnits.bytes(s.bytes)) in \(HumanUnits.duration(duration))" + tier
    }

    /// `-v`'s note on stderr when a host was paused, its limit changed, or it was given up on.
    public static func hostNote(_ note: HostNote) -> String {
        switch note {
        case .paused(let host, let seconds, let status):
            return "host \(host.name) answered \(status): paused for \(HumanUnits.duration(seconds))"
        case .limitChanged(let host, let from, let to):
            return "host \(host.name): at most \(to) transfer\(to == 1 ? "" : "s") at once (was \(from))"
        case .gaveUp(_, let failure):
            // Names the proxy when its failures were the proxy's (`HostFailure.proxy`).
            return failure.message
        }
    }

    /// `{"summary":{…}}`, the last JSON line; `interrupted` names the signal
    /// that ended the run (`SIGINT`), if one did.
    public static func summaryJSON(_ c: BatchTotals, duration: Double, interrupted: String?) -> String {
        var s = JSONLine()
        s.add("total", c.total)
        s.add("success", c.success)
        s.add("failure", c.failure)
        s.add("empty", c.empty)
        s.add("cache", c.cache)
        s.add("network", c.network)
        s.add("revalidated", c.revalidated)
        s.add("stale", c.stale)
        if let r = c.remoteTier {
            s.add("remote", c.remote)
            var tier = JSONLine()
            tier.add("hits", r.hits)
            tier.add("misses", r.misses)
            tier.add("readErrors", r.readErrors)
            tier.add("uploads", r.uploads)
            tier.add("uploadErrors", r.uploadErrors)
            tier.add("disabled", r.disabled)
            tier.add("uploadsStopped", r.uploadsStopped)
            tier.add("reason", r.reason)
            s.add("remoteCache", object: tier)
        }
        s.add("bytes", c.bytes)
        s.add("durationMs", milliseconds: duration)
        let hosts = c.hosts ?? HostCounts()
        s.add("hosts", hosts.hosts)
        s.add("hostsPaused", hosts.hostsPaused)
        s.add("hostsGivenUp", hosts.hostsGivenUp)
        s.add("interrupted", interrupted)
        var line = JSONLine()
        line.add("summary", object: s)
        return line.rendered
    }
}
