import DiskCache
@testable import Loader
import Testing

/// SPEC §3's lines without a binary: known events in, the exact bytes out.
@Suite struct OutputLinesTests {
    static let url = "http://127.0.0.1/a.png"

    static func png() -> LoadResult {
        LoadResult(path: "/cache/ab/cd", source: .network, bytes: 153, status: 200, contentType: "image/png", format: .png,
                   width: 64, height: 48, attempts: 1, httpVersion: "1.1", redirects: 0, effectiveURL: nil)
    }

    static func human(_ phase: Phase, _ lines: ResultLine = ResultLine(), column: Int = 0) -> String? {
        var column = column
        var bytes: [UInt8] = []
        guard lines.human(LoadEvent(url: url, phase: phase, duration: 0.0123), urlColumn: &column, into: &bytes) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func aSuccessLineNamesThePathSourceSizeAndImage() {
        #expect(Self.human(.success(Self.png())) == "success  \(Self.url)  /cache/ab/cd  (network, 153 B, png 64x48)")
        #expect(Self.human(.success(Self.png()), ResultLine(quiet: true)) == nil, "-q leaves successes out")
        #expect(Self.human(.success(Self.png()), ResultLine(verbose: true))
                == "success  \(Self.url)  /cache/ab/cd  (network, 153 B, png 64x48)  [HTTP/1.1 200, image/png, attempts 1, 12.3 ms]")
        #expect(Self.human(.success(Self.png()), ResultLine(color: true))
                == "\u{1B}[32msuccess\u{1B}[0m  \(Self.url)  /cache/ab/cd  (network, 153 B, png 64x48)")
    }

    @Test func aFailureAndAnEmptyLine() {
        let error = LoadError(kind: .http, message: "HTTP 404 Not Found", status: 404, attempts: 1)
        #expect(Self.human(.failure(error)) == "failure  \(Self.url)  HTTP 404 Not Found")
        #expect(Self.human(.failure(error), ResultLine(verbose: true)) == "failure  \(Self.url)  HTTP 404 Not Found  [http, attempts 1, 12.3 ms]")
        #expect(Self.human(.empty(.notCached)) == "empty    \(Self.url)  not cached")
        #expect(Self.human(.loading(nil)) == nil, "loading has no human line")
    }

    /// A list line or a server's text can hold escape sequences: printed raw,
    /// they would recolour, move the cursor or retitle the user's terminal.
    @Test func controlCharactersFromAListOrAServerAreShownAsEscapes() {
        var column = 0
        var bytes: [UInt8] = []
        let url = "http://h/\u{1B}]0;pwned\u{07}a\u{7F}\u{9B}31m.png"
        let error = LoadError(kind: .invalidURL, message: "bad byte \u{1B}[2J in \u{1B}[31mURL\r", attempts: 0)
        #expect(ResultLine(color: true).human(LoadEvent(url: url, phase: .failure(error), duration: 0), urlColumn: &column, into: &bytes))
        let line = String(decoding: bytes, as: UTF8.self)
        #expect(line == "\u{1B}[31mfailure\u{1B}[0m  http://h/\\x1B]0;pwned\\x07a\\x7F\\u{9B}31m.png  bad byte \\x1B[2J in \\x1B[31mURL\\x0D",
                "only the tool's own colour codes stay escape sequences")
        let typed = LoadResult(path: "/cache/ab/cd", source: .network, bytes: 153, status: 200, contentType: "image/x-\u{1B}[1m",
                               format: nil, width: nil, height: nil, attempts: 1, httpVersion: "1.1", redirects: 0, effectiveURL: nil)
        #expect(Self.human(.success(typed)) == "success  \(Self.url)  /cache/ab/cd  (network, 153 B, image/x-\\x1B[1m)")
        #expect(Self.human(.empty(.notCached))?.contains("\\") == false, "plain text is untouched")
    }

    /// A line is gathered on the stack in pieces of `LineBytes.capacity`
    /// bytes: one longer than that, with escapes on both sides of the
    /// boundary, reads the same as one written byte by byte, after what the
    /// output already holds.
    @Test func aLineLongerThanItsStackBufferIsWhole() {
        for length in [LineBytes.capacity - 40, LineBytes.capacity - 19, LineBytes.capacity - 18, LineBytes.capacity, 3 * LineBytes.capacity] {
            let path = "/" + String(repeating: "p", count: length) + "\u{1B}x\u{9B}y"
            let url = "http://h" + path
            var column = 0
            var bytes = Array("before\n".utf8)
            #expect(ResultLine().human(LoadEvent(url: url, phase: .empty(.notCached), duration: 0), urlColumn: &column, into: &bytes))
            let shown = "http://h/" + String(repeating: "p", count: length) + "\\x1Bx\\u{9B}y"
            #expect(String(decoding: bytes, as: UTF8.self) == "before\nempty    \(shown)  not cached", "length \(length)")
            var json = Array("before\n".utf8)
            ResultLine.json(LoadEvent(url: url, phase: .empty(.notCached), duration: 0), into: &json)
            #expect(String(decoding: json, as: UTF8.self)
                    == "before\n{\"url\":\"http://h/\(String(repeating: "p", count: length))\\u001bx\u{9B}y\",\"phase\":\"empty\",\"reason\":\"not-cached\"}",
                    "length \(length)")
        }
        // Nothing is left behind for a line that is not written.
        var column = 0
        var bytes = Array("before".utf8)
        #expect(!ResultLine(quiet: true).human(LoadEvent(url: Self.url, phase: .success(Self.png()), duration: 0), urlColumn: &column, into: &bytes))
        #expect(bytes == Array("before".utf8))
    }

    /// The tool writes a result's JSON object straight into its output; a
    /// program gets the same bytes from `ResultLine.json(_:)`.
    @Test func jsonWrittenInPlaceIsTheJSONLine() {
        let error = LoadError(kind: .http, message: "HTTP 404 \"Not\" Found", status: 404, attempts: 1)
        for phase: Phase in [.success(Self.png()), .failure(error), .empty(.cancelled), .loading(nil)] {
            let event = LoadEvent(url: Self.url, phase: phase, duration: 0.5)
            var bytes: [UInt8] = []
            ResultLine.json(event, into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == ResultLine.json(event).rendered)
        }
    }

    /// A cache hit's result keeps the cache directory and the entry's key,
    /// and its lines write `DIR/<key>` from them: the same bytes as for the
    /// path given whole, with JSON escapes in the directory, and across the
    /// line's stack buffer.
    @Test func aHitsPathIsWrittenFromItsDirectoryAndKey() {
        let key = "0123456789abcdef0123456789abcdef"
        let long = "/" + String(repeating: "d", count: LineBytes.capacity - 30)
        for directory in ["/cache", "/", "/c\"q\\x\u{01}y\u{1B}", "/café", long, long + "\"", String(repeating: "e", count: 3 * LineBytes.capacity)] {
            func result(_ stored: LoadResult.StoredBody) -> LoadResult {
                LoadResult(stored: stored, source: .cache, bytes: 11648, status: 200, contentType: "image/png", format: .png,
                           width: 64, height: 60, attempts: 0, httpVersion: nil, redirects: 0, effectiveURL: nil)
            }
            let path = (directory == "/" ? "" : directory) + "/" + key   // the root's paths are /<key>
            let hit = result(.entry(directory: directory, key: MD5.Digest(hex: key)!))   // the digits written from the digest
            let whole = result(.path(path))
            #expect(hit.path == path)
            for verbose in [false, true] {
                #expect(Self.human(.success(hit), ResultLine(verbose: verbose)) == Self.human(.success(whole), ResultLine(verbose: verbose)),
                        "\(directory.prefix(20))")
            }
            let event = LoadEvent(url: Self.url, phase: .success(hit), duration: 0.5)
            var bytes = Array("before\n".utf8)
            ResultLine.json(event, into: &bytes)
            let expected = "before\n" + ResultLine.json(LoadEvent(url: Self.url, phase: .success(whole), duration: 0.5)).rendered
            #expect(String(decoding: bytes, as: UTF8.self) == expected, "\(directory.prefix(20))")
            #expect(ResultLine.json(event).rendered == expected.dropFirst(7))
        }
        #expect(Self.human(.success(Self.png()))?.contains("  /cache/ab/cd  ") == true, "a path given whole is written as it is")
    }

    @Test func onATerminalTheURLColumnIsPaddedToTheWidestSoFar() {
        let aligned = ResultLine(alignURLs: true)
        #expect(Self.human(.empty(.notCached), aligned, column: Self.url.count + 4) == "empty    \(Self.url)      not cached")
        #expect(Self.human(.empty(.notCached), ResultLine(), column: Self.url.count + 4) == "empty    \(Self.url)  not cached")
    }

    @Test func jsonObjectsKeepSPECsFieldOrder() {
        let success = ResultLine.json(LoadEvent(url: Self.url, phase: .success(Self.png()), duration: 0.0123)).rendered
        #expect(success == #"{"url":"http://127.0.0.1/a.png","phase":"success","source":"network","path":"/cache/ab/cd","bytes":153,"#
                + #""status":200,"contentType":"image/png","format":"png","width":64,"height":48,"attempts":1,"durationMs":12.3}"#)
        let error = LoadError(kind: .timeout, message: "timed out", attempts: 2)
        let failure = ResultLine.json(LoadEvent(url: Self.url, phase: .failure(error), duration: 1)).rendered
        #expect(failure == #"{"url":"http://127.0.0.1/a.png","phase":"failure","error":{"kind":"timeout","message":"timed out"},"attempts":2,"durationMs":1000.0}"#)
        #expect(ResultLine.json(LoadEvent(url: Self.url, phase: .empty(.cancelled), duration: 0)).rendered
                == #"{"url":"http://127.0.0.1/a.png","phase":"empty","reason":"cancelled"}"#)
    }

    @Test func jsonEscapesControlCharactersAndKeepsNonASCII() {
        #expect(JSONLine.quote("plain/path.png") == #""plain/path.png""#)
        #expect(JSONLine.quote("a\"b\\c\nd\re\tf\u{01}g\u{7F}") == #""a\"b\\c\nd\re\tf\u0001g\u007f""#)
        #expect(JSONLine.quote("café ☃ 日本") == "\"café ☃ 日本\"", "UTF-8 is copied as it is")
        var line = JSONLine()
        line.add("name", "x\u{1F}y")
        line.add("absent", nil as String?)
        line.add("flag", false)
        #expect(line.rendered == #"{"name":"x\u001fy","flag":false}"#)
    }

    @Test func theSummaryInBothForms() {
        var totals = BatchTotals()
        totals.count(.success(Self.png()))
        totals.count(.failure(LoadError(kind: .dns, message: "no such host")))
        totals.count(.empty(.notCached))
        #expect(ResultLine.summaryText(totals, duration: 1.25)
                == "3 URLs: 1 success, 1 failure, 1 empty (cache 0, network 1, revalidated 0, stale 0); 153 B in 1.25 s")
        #expect(ResultLine.summaryJSON(totals, duration: 1.25, interrupted: "SIGINT")
                == #"{"summary":{"total":3,"success":1,"failure":1,"empty":1,"cache":0,"network":1,"revalidated":0,"stale":0,"#
                + #""bytes":153,"durationMs":1250.0,"hosts":0,"hostsPaused":0,"hostsGivenUp":0,"interrupted":"SIGINT"}}"#)
    }

    @Test func pausedHostsAreNamedInTheSummary() {
        var totals = BatchTotals()
        totals.count(.empty(.notCached))
        var hosts = HostCounts()
        hosts.hosts = 3
        hosts.hostsPaused = 1
        totals.hosts = hosts
        #expect(ResultLine.summaryText(totals, duration: 0.5)
                == "1 URL: 0 success, 0 failure, 1 empty (cache 0, network 0, revalidated 0, stale 0); 0 B in 500.0 ms; hosts: 3, 1 paused, 0 given up")
    }

    @Test func verboseHostNotes() {
        let host = HostKey(origin: "https://example.com", name: "example.com")
        #expect(ResultLine.hostNote(.limitChanged(host, from: 6, to: 3)) == "host example.com: at most 3 transfers at once (was 6)")
        // "at most 1 transfers" before.
        #expect(ResultLine.hostNote(.limitChanged(host, from: 3, to: 1)) == "host example.com: at most 1 transfer at once (was 3)")
        #expect(ResultLine.hostNote(.paused(host, seconds: 2, status: 429)) == "host example.com answered 429: paused for 2.00 s")
    }

    @Test func theProgressBarRendersCountsBytesRateAndETA() {
        var bar = ProgressBar()
        bar.total = 4
        bar.known = 4
        bar.record()
        bar.done = 2
        bar.failed = 1
        bar.bytes = 2048
        bar.elapsed = 2
        bar.transfersRunning = 1
        bar.record()
        #expect(bar.render(width: 100) == "[###############...............]  2/4 URLs  1 failed  2.0 KiB  1.0 KiB/s  ETA 2s")
        // Less room: fewer cells (the width less 56 columns for the text), and the text stays whole.
        #expect(bar.render(width: 80) == "[#########..........]  2/4 URLs  1 failed  2.0 KiB  1.0 KiB/s  ETA 2s")
        // The bar keeps its length while the text's changes (it moved with every digit).
        var longer = bar
        longer.failed = 10
        #expect(longer.render(width: 80).hasPrefix("[#########..........]  2/4 URLs  10 failed"), "\(longer.render(width: 80))")
        #expect(bar.render(width: 40) == "2/4 URLs  1 failed  2.0 KiB  1.0 KiB/s ", "no room for the bar: the text, cut short of the width")
        var unknown = ProgressBar()
        unknown.done = 3
        unknown.known = 5
        #expect(unknown.render(width: 80) == "3/5+ URLs  0 B")
        #expect(ProgressBar.clock(65) == "1m05s")
        #expect(ProgressBar.clock(7380) == "2h03m")
    }

    /// The bar told less than the truth: `0 B/s` in a run of cache hits, an
    /// ETA that grew while a run's last URLs took their time (the elapsed
    /// time grew, the count did not), and an average rate for a transfer that
    /// had slowed or stopped. The rate and the ETA now come from the last few seconds.
    @Test func theProgressBarSaysOnlyWhatItKnows() {
        var hits = ProgressBar(window: 5)
        hits.total = 10
        hits.known = 10
        hits.transfersRunning = 0
        for second in 0...2 {
            hits.elapsed = Double(second)
            hits.done = 3 * second
            hits.record()
        }
        #expect(hits.render(width: 60).hasSuffix("]  6/10 URLs  0 B  ETA 2s"), "no rate without a byte from the network: \(hits.render(width: 60))")

        // The URLs left are all running: how long they take is not known from a count.
        var end = ProgressBar(window: 5)
        end.total = 10
        end.known = 10
        var shown: [(line: String, waiting: Bool)] = []
        for tenth in 0...100 {
            end.elapsed = Double(tenth) / 10
            end.done = min(9, tenth / 4)
            end.transfersRunning = min(3, 10 - end.done)
            end.bytes = Int64(end.done) * 1000
            end.bodiesInFlight = 1
            end.record()
            shown.append((end.render(width: 200), 10 - end.done > 3))
        }
        #expect(shown.contains { $0.waiting && $0.line.contains("ETA") }, "an ETA while URLs wait to start")
        #expect(!shown.contains { !$0.waiting && $0.line.contains("ETA") }, "\(shown.filter { !$0.waiting }.map(\.line))")
        #expect(shown.last!.line.hasSuffix("  stalled"), "no byte in 5 s: \(shown.last!.line)")

        // One large body of declared length: the ETA by bytes, at the rate of the last seconds.
        var large = ProgressBar(window: 2)
        large.total = 1
        large.known = 1
        large.bodiesInFlight = 1
        large.expectedBytes = 10_000
        for second in 0...4 {
            large.elapsed = Double(second)
            large.bytes = second < 3 ? Int64(second) * 3000 : 6000 + Int64(second - 2) * 1000   // slower from 2 s on
            large.record()
        }
        #expect(large.render(width: 200).hasSuffix("  1000 B/s  ETA 2s"), "\(large.render(width: 200))")
    }
}
