import Foundation
import TestSupport

/// Runs the built binary inside a real pseudo-terminal (util-linux `script`),
/// so `isatty` is true for its stdin, stdout and stderr, as in a person's
/// terminal. The command line is run by `sh -c`, so a test can redirect one
/// stream (`> out.txt`) and keep the other on the terminal.
extension CLI {
    /// `shellTail` is appended to the command line (e.g. `"> out.txt"`).
    /// The terminal's output comes back in `stdout`, with `\r\n` as written
    /// by the terminal driver.
    func runInTerminal(_ arguments: [String], shellTail: String = "", environment: [String: String] = [:],
                       timeout: Double = 60) throws -> ProcessResult {
        var env = ["TERM": "xterm", "COLUMNS": "100", "NO_COLOR": ""]
        env.merge(environment) { _, new in new }
        if env["ASYNCFETCH_CACHE_DIR"] == nil { env["ASYNCFETCH_CACHE_DIR"] = cacheDir }
        let command = ([Self.binary] + arguments).map(Self.shellQuote).joined(separator: " ") + " " + shellTail
        return try runProcess("/usr/bin/script", ["-qfec", command, "/dev/null"], environment: env, timeout: timeout)
    }

    static func shellQuote(_ word: String) -> String {
        "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// What a terminal shows for each line: the text after the last carriage
    /// return or erase-line sequence of every `\n`-separated line.
    static func visibleLines(_ raw: String) -> [String] {
        raw.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let segments = line.replacingOccurrences(of: "\u{1B}[K", with: "").split(separator: "\r", omittingEmptySubsequences: false)
            return String(segments.last ?? "")
        }
    }
}

/// Peak resident memory of a child process, measured by Python's
/// `getrusage(RUSAGE_CHILDREN)` (python3 is installed by `make deps`).
struct PeakMemory {
    let kilobytes: Int
    let status: Int32
    let stdoutLines: Int

    static func measure(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> PeakMemory {
        let script = """
            import resource, subprocess, sys
            p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode, p.stdout.count(b"\\n"))
            """
        let result = try runProcess("/usr/bin/python3", ["-c", script, executable] + arguments,
                                    environment: environment, timeout: 120)
        let fields = result.stdout.split(separator: " ").map { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }
        return PeakMemory(kilobytes: fields.first ?? -1, status: Int32(fields.count > 1 ? fields[1] : -1),
                          stdoutLines: fields.count > 2 ? fields[2] : -1)
    }
}
