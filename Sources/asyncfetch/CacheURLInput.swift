import ArgumentParser
import Fetch
import Support
#if canImport(Glibc)
import Glibc
#endif

/// The URLs of `cache path` and `cache rm`: arguments, then the lines of each
/// `-i FILE` (as `--input` reads them: blank lines and `#` comments skipped),
/// and `--json`. Each URL gets one line of output, in order, so a script can
/// pair the lines with what it asked.
struct CacheURLInput: ParsableArguments {
    @Argument(help: "URLs.") var urls: [String] = []

    @Option(name: [.short, .customLong("input")], help: ArgumentHelp(
        "Also read URLs from this file, one per line ('-' for stdin). Repeatable. (default: none)", valueName: "file"),
        completion: .file())
    var input: [String] = []

    @Flag(help: "Print one JSON object per URL.")
    var json = false

    func validate() throws {
        if urls.isEmpty && input.isEmpty { throw ValidationError("no URL given (name URLs as arguments, or a list with -i FILE)") }
    }

    /// Every URL, arguments first.
    func all() throws -> [String] {
        var all = urls
        for path in input { all += try Self.lines(of: path) }
        return all
    }

    static func lines(of path: String) throws -> [String] {
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw UsageError(environment: "cannot read -i \(path): \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }
        var splitter = LineSplitter(maxLineBytes: Defaults.inputMaxLineBytes)
        var lines: [String] = []
        func take(_ line: LineSplitter.Line) {
            switch line {
            case .text(let bytes): lines.append(String(decoding: bytes, as: UTF8.self))
            case .overlong(let number): lines.append("(line \(number): longer than \(Defaults.inputMaxLineBytes) bytes)")
            }
        }
        var chunk = [UInt8](repeating: 0, count: Defaults.inputChunkBytes)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw UsageError(environment: "cannot read -i \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            chunk.withUnsafeBufferPointer { splitter.feed(UnsafeBufferPointer(rebasing: $0[0..<n]), take) }
        }
        splitter.finish(take)
        return lines
    }

    /// One JSON line: `{"url":…,<key>:<value>,…}`.
    static func jsonLine(url: String, _ fill: (inout JSONLine) -> Void) -> String {
        var line = JSONLine()
        line.add("url", redactURL(url))
        fill(&line)
        return line.rendered
    }
}
