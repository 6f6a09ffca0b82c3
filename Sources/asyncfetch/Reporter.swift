import Fetch
import Loader
#if canImport(Glibc)
import Glibc
#endif

/// Turns loader events into the documented output: one line per URL at its
/// terminal phase (or JSON Lines, one per phase change), then a summary.
/// Result lines go to stdout unless stdout carries a body (`-o -`).
final class Reporter {
    enum Style { case human, json }

    private let style: Style
    private let quiet: Bool
    private let verbose: Bool
    private let out: LineOutput
    private let color: Bool
    private(set) var summary = Summary()

    init(style: Style, quiet: Bool, verbose: Bool, resultsToStderr: Bool) {
        self.style = style
        self.quiet = quiet
        self.verbose = verbose
        out = LineOutput(fd: resultsToStderr ? 2 : 1)
        let terminal = isatty(resultsToStderr ? 2 : 1) == 1
        color = style == .human && terminal && getenv("NO_COLOR") == nil
    }

    func report(_ event: LoadEvent) {
        summary.count(event.phase)
        switch style {
        case .json: write(jsonLine(event))
        case .human: if let line = humanLine(event) { write(line) }
        }
        if case .success(let result) = event.phase, let warning = result.warning {
            warn("\(event.url): \(warning)")
        }
        // Network results are slow anyway: show them at once. Cache answers
        // are left to stdio's buffer, so 10,000 hits cost few system calls.
        if case .success(let result) = event.phase, result.source == .cache { return }
        if case .empty = event.phase { return }
        out.flush()
    }

    func finish(duration: Double) {
        switch style {
        case .json:
            var s = JSONLine()
            s.add("total", summary.total)
            s.add("success", summary.success)
            s.add("failure", summary.failure)
            s.add("empty", summary.empty)
            s.add("cache", summary.cache)
            s.add("network", summary.network)
            s.add("revalidated", summary.revalidated)
            s.add("stale", summary.stale)
            s.add("bytes", summary.bytes)
            s.add("durationMs", milliseconds: duration)
            var line = JSONLine()
            line.add("summary", object: s)
            write(line.rendered)
        case .human:
            if summary.total > 1 && !quiet {
                out.flush()
                var parts = ["\(summary.success) success", "\(summary.failure) failure"]
                if summary.empty > 0 { parts.append("\(summary.empty) empty") }
                let sources = "cache \(summary.cache), network \(summary.network), revalidated \(summary.revalidated), stale \(summary.stale)"
                Console.error("\(summary.total) URLs: \(parts.joined(separator: ", ")) (\(sources)); \(formatBytes(summary.bytes)) in \(formatDuration(duration))")
            }
        }
        out.flush()
    }

    func warn(_ message: String) {
        out.flush()
        Console.error("asyncfetch: warning: \(message)")
    }

    private func write(_ line: String) { out.line(line) }

    private func paint(_ text: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    private func humanLine(_ event: LoadEvent) -> String? {
        switch event.phase {
        case .loading:
            return nil
        case .empty(let reason):
            return paint("empty  ", "33") + "  \(event.url)  " + (reason == .notCached ? "not cached" : "cancelled before it started")
        case .failure(let error):
            var line = paint("failure", "31") + "  \(event.url)  \(error.message)"
            if error.source == .cache { line += " (remembered)" }
            if verbose { line += "  [\(error.kind.rawValue), attempts \(error.attempts), \(formatDuration(event.duration))]" }
            return line
        case .success(let result):
            if quiet { return nil }
            var detail = [result.source.rawValue, formatBytes(result.bytes)]
            if let format = result.format {
                if let w = result.width, let h = result.height { detail.append("\(format) \(w)x\(h)") } else { detail.append(format) }
            } else if let type = result.contentType {
                detail.append(type)
            }
            var line = paint("success", "32") + "  \(event.url)  \(result.path ?? "(not stored: no-store)")  (\(detail.joined(separator: ", ")))"
            if verbose {
                var http: [String] = []
                if let status = result.status { http.append("HTTP \(status)") }
                if let version = result.httpVersion { http.append("HTTP/\(version)") }
                if result.attempts > 0 { http.append("attempts \(result.attempts)") }
                if result.redirects > 0 { http.append("redirects \(result.redirects)") }
                http.append(formatDuration(event.duration))
                line += "  [\(http.joined(separator: ", "))]"
            }
            return line
        }
    }

    private func jsonLine(_ event: LoadEvent) -> String {
        var line = JSONLine()
        line.add("url", event.url)
        line.add("phase", event.phase.name)
        switch event.phase {
        case .loading:
            break
        case .empty(let reason):
            line.add("reason", reason.rawValue)
        case .success(let result):
            line.add("source", result.source.rawValue)
            line.add("path", result.path)
            line.add("bytes", result.bytes)
            line.add("status", result.status)
            line.add("contentType", result.contentType)
            line.add("format", result.format)
            line.add("width", result.width)
            line.add("height", result.height)
            line.add("attempts", result.attempts)
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
        return line.rendered
    }
}

func formatBytes(_ bytes: Int64) -> String {
    if bytes < 1024 { return "\(bytes) B" }
    let units = ["KiB", "MiB", "GiB", "TiB"]
    var value = Double(bytes) / 1024
    var unit = 0
    while value >= 1024 && unit < units.count - 1 { value /= 1024; unit += 1 }
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) \(units[unit])"
}

func formatDuration(_ seconds: Double) -> String {
    if seconds < 1 {
        let tenths = Int((seconds * 10_000).rounded())
        return "\(tenths / 10).\(tenths % 10) ms"
    }
    let hundredths = Int((seconds * 100).rounded())
    return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) s"
}
