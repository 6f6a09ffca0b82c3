import Fetch
import Loader

/// The lines themselves: SPEC §3's human line and JSON objects.
extension Reporter {
    /// `success  URL  PATH  (network, 153 B, png 64x48)`, `failure  URL
    /// MESSAGE`, `empty    URL  not cached`; nil for `loading` and, with
    /// `-q`, for successes. `-v` appends the HTTP detail in brackets.
    func humanLine(_ event: LoadEvent) -> String? {
        switch event.phase {
        case .loading:
            return nil
        case .empty(let reason):
            let detail = reason == .notCached ? "not cached" : "cancelled before it started"
            return paint("empty  ", "33") + "  \(event.url)  \(detail)"
        case .failure(let error):
            var line = paint("failure", "31") + "  \(event.url)  \(error.message)"
            if error.source == .cache { line += " (remembered)" }
            if verbose {
                var detail = [error.kind.rawValue]
                if error.attempts > 0 { detail.append("attempts \(error.attempts)") }
                detail.append(formatDuration(event.duration))
                line += "  [\(detail.joined(separator: ", "))]"
            }
            return line
        case .success(let result):
            if quiet { return nil }
            var detail = [result.source.rawValue, formatBytes(result.bytes)]
            if let format = result.format {
                if let w = result.width, let h = result.height { detail.append("\(format) \(w)x\(h)") } else { detail.append(format) }
            } else if let type = result.contentType {
                detail.append(type)
            }
            let path = result.path ?? "(not stored: no-store)"
            var line = paint("success", "32") + "  \(event.url)  \(path)  (\(detail.joined(separator: ", ")))"
            if verbose { line += "  [\(httpDetail(result, duration: event.duration))]" }
            return line
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
        http.append(formatDuration(duration))
        return http.joined(separator: ", ")
    }

    private func paint(_ text: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// One object per phase change, fields in SPEC §3's order.
    func jsonLine(_ event: LoadEvent) -> String {
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
