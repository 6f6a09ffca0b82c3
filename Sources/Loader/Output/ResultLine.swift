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
        switch event.phase {
        case .loading:
            return false
        case .empty(let reason):
            paint("empty  ", "33", into: &line)
            appendURLColumn(event.url, column: &urlColumn, to: &line)
            Self.appendUTF8(reason == .notCached ? "not cached" : "cancelled before it started", to: &line)
        case .failure(let error) where event.refreshed:
            if quiet { return false }
            paint("refresh", "33", into: &line)
            appendURLColumn(event.url, column: &urlColumn, to: &line)
            Self.appendUTF8("background revalidation failed: ", to: &line)
            Self.appendShown(error.message, to: &line)
            Self.appendUTF8("; the stored copy stays", to: &line)
        case .failure(let error):
            paint("failure", "31", into: &line)
            appendURLColumn(event.url, column: &urlColumn, to: &line)
            Self.appendShown(error.message, to: &line)
            if error.source == .cache && error.kind == .http { Self.appendUTF8(" (remembered)", to: &line) }
            if verbose {
                var detail = [error.kind.rawValue]
                if error.attempts > 0 { detail.append("attempts \(error.attempts)") }
                detail.append(HumanUnits.duration(event.duration))
                append("  [", detail.joined(separator: ", "), "]", to: &line)
            }
        case .success(let result):
            if quiet { return false }
            if event.refreshed { paint("refresh", "32", into: &line) } else { paint("success", "32", into: &line) }
            appendURLColumn(event.url, column: &urlColumn, to: &line)
            Self.appendUTF8(result.path ?? (result.storeFailure == nil ? "(not stored: no-store)" : "(not stored: the cache could not be written)"), to: &line)
            append("  (", result.source.rawValue, ", ", to: &line)
            if let reason = result.reason { append(reason, ", ", to: &line) }
            HumanUnits.appendBytes(result.bytes, to: &line)
            if let format = result.format {
                append(", ", format.name, to: &line)
                if let w = result.width, let h = result.height {
                    line.append(0x20)
                    HumanUnits.appendDecimal(Int64(w), to: &line)
                    line.append(0x78)   // x
                    HumanUnits.appendDecimal(Int64(h), to: &line)
                }
            } else if let type = result.contentType {
                Self.appendUTF8(", ", to: &line)
                Self.appendShown(type, to: &line)
            }
            line.append(0x29)   // )
            if let receipt = result.receipt {
                append("  -> ", receipt.path, to: &line)
                if verbose {
                    append(" (", receipt.method, to: &line)
                    if let note = receipt.note { append("; ", note, to: &line) }
                    line.append(0x29)   // )
                }
            }
            if verbose {
                Self.appendUTF8("  [", to: &line)
                Self.appendShown(httpDetail(result, duration: event.duration), to: &line)
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
        Self.appendUTF8("  ", to: &line)
        Self.appendShown(url, to: &line)
        Self.appendUTF8("  ", to: &line)
        guard alignURLs else { return }
        let width = url.count
        if width > urlColumn { urlColumn = min(width, Defaults.urlColumnMax) }
        if width < urlColumn { line.append(contentsOf: repeatElement(0x20, count: urlColumn - width)) }
    }

    /// The parts' UTF-8 after `line`'s (not variadic: no array per call).
    private func append(_ a: String, _ b: String, _ c: String = "", to line: inout [UInt8]) {
        Self.appendUTF8(a, to: &line)
        Self.appendUTF8(b, to: &line)
        Self.appendUTF8(c, to: &line)
    }

    /// `text`'s UTF-8 after `line`'s, copied in one piece (appending a
    /// `String.UTF8View` goes through the generic sequence path).
    static func appendUTF8(_ text: String, to line: inout [UInt8]) {
        // Borrowed bytes for a native or small string (no copy of `text`,
        // no retain and release); a bridged one is made contiguous first.
        if text.utf8.withContiguousStorageIfAvailable({ line.append(contentsOf: $0) }) != nil { return }
        var text = text
        text.withUTF8 { line.append(contentsOf: $0) }
    }

    /// Text from a URL list or a server (URLs, messages, content types):
    /// `appendUTF8`, with control characters written as escapes (`\x1B`,
    /// `\u{9B}`), so a line can never move the cursor, recolour or retitle
    /// the terminal it is printed on. JSON escapes them its own way.
    static func appendShown(_ text: String, to line: inout [UInt8]) {
        let start = line.count
        appendUTF8(text, to: &line)
        var i = start
        while i < line.count {
            let byte = line[i]
            let c1 = byte == 0xC2 && i + 1 < line.count && (0x80...0x9F).contains(line[i + 1])
            guard byte < 0x20 || byte == 0x7F || c1 else { i += 1; continue }
            let hex = Array(String(c1 ? line[i + 1] : byte, radix: 16, uppercase: true).utf8)
            let digits = hex.count == 1 ? [0x30] + hex : hex
            let escape: [UInt8] = c1 ? Array("\\u{".utf8) + digits + [0x7D] : Array("\\x".utf8) + digits
            line.replaceSubrange(i..<(i + (c1 ? 2 : 1)), with: escape)
            i += escape.count
        }
    }

    private func httpDetail(_ result: LoadResult, duration: Double) -> String {
        var http: [String] = []
        if let status = result.status {
            // A cache hit has the stored status but made no request.
            http.append(result.httpVersion.map { "HTTP/\($0) \(status)" } ?? "HTTP \(status)")
        }
        if let type = result.contentType { http.append(type) }
        if result.attempts > 0 { http.append("attempts \(result.attempts)") }
        if result.redirects > 0 {
            var text = "redirects \(result.redirects)"
            if let final = result.effectiveURL { text += " to \(redactURL(final))" }
            http.append(text)
        }
        http.append(HumanUnits.duration(duration))
        return http.joined(separator: ", ")
    }

    private func paint(_ text: String, _ code: String, into line: inout [UInt8]) {
        if color { append("\u{1B}[", code, "m", to: &line) }
        Self.appendUTF8(text, to: &line)
        if color { Self.appendUTF8("\u{1B}[0m", to: &line) }
    }

    /// One object per phase change, fields in SPEC §3's order.
    public static func json(_ event: LoadEvent) -> JSONLine {
        var line = JSONLine()
        line.add("url", event.url)
        line.add("phase", event.refreshed ? "refreshed" : event.phase.name)
        switch event.phase {
        case .loading:
            break
        case .empty(let reason):
            line.add("reason", reason.rawValue)
        case .success(let result):
            line.add("source", result.source.rawValue)
            line.add("reason", result.reason)
            line.add("path", result.path)
            line.add("bytes", result.bytes)
            line.add("status", result.status)
            line.add("contentType", result.contentType)
            line.add("format", result.format?.name)
            line.add("width", result.width)
            line.add("height", result.height)
            line.add("checked", result.checked?.rawValue)
            line.add("attempts", result.attempts)
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
            line.add("durationMs", milliseconds: event.duration)
        }
        return line
    }

    /// `12 URLs: 11 success, 1 failure, 0 empty (cache 3, network 8,
    /// revalidated 0, stale 0); 1.2 MiB in 1.25 s`, plus the remote tier's
    /// counts when it was used.
    public static func summaryText(_ s: BatchTotals, duration: Double) -> String {
        let parts = ["\(s.success) success", "\(s.failure) failure", "\(s.empty) empty"]
        var sources = "cache \(s.cache), network \(s.network), revalidated \(s.revalidated), stale \(s.stale)"
        var tier = ""
        if let r = s.remoteTier {
            sources += ", remote \(s.remote)"
            tier = "; remote cache: \(r.hits) hits, \(r.misses) misses, \(r.uploads) uploads, \(r.errors) errors"
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
            return "host \(host.name): at most \(to) transfers at once (was \(from))"
        case .gaveUp(_, let failure):
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
