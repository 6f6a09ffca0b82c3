import Foundation
import Glibc
import Testing
import TestSupport

/// SIGINT and SIGTERM in a process's first milliseconds (SPEC §6). The run's
/// handler used to be installed ~3 ms into a release run (after the runtime's
/// start, the parse, the cache's opening): a signal before that killed the
/// process by the default action, with no line per URL and no summary.
@Suite struct EarlySignalE2ETests {
    let server: ScriptedServer
    let cli: CLI

    init() throws {
        server = try SignalE2ETests.stallingServer()
        cli = try CLI()
    }

    static let names = [SIGINT: "SIGINT", SIGTERM: "SIGTERM"]

    func start(_ arguments: [String]) throws -> SpawnedProcess {
        try startProcess(CLI.binary, arguments, environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir], timeout: 30)
    }

    /// `arguments` run with `signals` pending from the process's start (`runWithSignalsPending`).
    func runPending(_ arguments: [String], _ signals: [Int32]) async throws -> ProcessResult {
        try await runPendingTimed(arguments, signals).result
    }

    /// `runPending`, and the seconds from the process's spawn to its end, measured on the
    /// thread that waits for it (a busy test pool may resume the caller much later).
    func runPendingTimed(_ arguments: [String], _ signals: [Int32]) async throws -> (result: ProcessResult, seconds: Double) {
        let cacheDir = cli.cacheDir
        return try await offPool {
            let spawned = Date()
            let result = try runWithSignalsPending(CLI.binary, arguments, environment: ["ASYNCFETCH_CACHE_DIR": cacheDir],
                                                   signals: signals)
            return (result, Date().timeIntervalSince(spawned))
        }
    }

    /// Whether `pid` has a handler for `signal` (its `SigCgt` in /proc).
    static func catches(_ pid: Int32, _ signal: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
              let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    /// 128 + signal (not killed by it), one terminal line per URL, and the
    /// summary saying which signal interrupted the run.
    @discardableResult
    func expectInterrupted(_ result: ProcessResult, by signal: Int32, urls: [String],
                           _ when: String) throws -> [[String: Any]] {
        #expect(result.signal == nil && result.status == 128 + signal,
                "\(when): status \(result.status), killed by \(String(describing: result.signal)); \(result.stderr)")
        let lines = try #require(CLI.jsonLines(result.stdout), "\(when): every line is JSON: \(result.stdout)")
        let terminal = lines.filter { ["success", "failure", "empty"].contains($0["phase"] as? String) }
        #expect(terminal.count == urls.count && Set(terminal.compactMap { $0["url"] as? String }) == Set(urls),
                "\(when): each URL exactly once: \(result.stdout)")
        let summary = lines.last?["summary"] as? [String: Any]
        #expect(summary?["interrupted"] as? String == Self.names[signal], "\(when): \(result.stdout)")
        return terminal
    }

    /// A signal already pending when the process starts (sent while the mask the child
    /// inherits blocks it: the earliest moment there is): the run takes it as its first
    /// signal before it begins. Every URL is reported once, `empty` (cancelled, or
    /// offline not cached). It used to kill the process, every time.
    @Test(arguments: [SIGINT, SIGTERM])
    func aSignalPendingAtStartInterruptsTheRunBeforeItBegins(_ signal: Int32) async throws {
        let urls = (1...3).map { server.url("/stall.png?pending\(signal)-\($0)") }
        let offline = (1...3).map { "http://offline.invalid/\(signal)/\($0).png" }
        for (arguments, listed) in [(["--json"] + urls, urls), (["--json", "--offline"] + offline, offline)] {
            let result = try await runPending(arguments, [signal])
            let terminal = try expectInterrupted(result, by: signal, urls: listed, "\(arguments)")
            // Nothing started (SPEC §6): every URL `empty` (cancelled; offline, not-cached needs no
            // transfer either), none `loading`. The batch's first transfer used to start (and be
            // aborted: `failure`, cancelled) every time, the signal taken before the batch existed.
            #expect(terminal.allSatisfy { $0["phase"] as? String == "empty" }, "\(result.stdout)")
            #expect(!result.stdout.contains("\"loading\""), "\(result.stdout)")
        }
        #expect(server.requestCount("/stall.png") == 0, "no transfer started")
    }

    /// Signals at several moments of the first milliseconds: right after the start
    /// (pending), and 0 to 4 ms after the process catches the signal (from its start-up
    /// code on, before the runtime and the parse). Each run reports every URL once, the
    /// summary, 128 + signal.
    @Test func signalsInTheFirstMillisecondsInterruptTheRun() async throws {
        for (index, delay) in [-1, 0, 250, 500, 1_000, 2_000, 4_000].enumerated() {
            let signal = index % 2 == 0 ? SIGTERM : SIGINT
            let urls = (1...3).map { server.url("/stall.png?early\(index)-\($0)") }
            let result: ProcessResult
            if delay < 0 {
                result = try await runPending(["--json"] + urls, [signal])
            } else {
                let child = try start(["--json"] + urls)
                let deadline = Date().addingTimeInterval(10)
                while !Self.catches(child.pid, signal) && child.isRunning && Date() < deadline { usleep(50) }
                if delay > 0 { usleep(useconds_t(delay)) }
                child.sendSignal(signal)
                result = try await child.finish()
            }
            try expectInterrupted(result, by: signal, urls: urls, "signal \(signal) \(delay) µs after it was caught")
        }
    }

    /// Commands other than a run report nothing on a signal: one that came before the
    /// command began still kills it at once (a shell sees 130 or 143), as the default
    /// action would have: before the command printed anything (unsignalled, each prints
    /// something but `cache list` of an empty cache). The spawn-to-end bound only catches a process that lingers: a debug
    /// build's start alone took 1.5–2.3 s beside a release build.
    @Test(arguments: [["cache", "stats"], ["cache", "list", "--json"], ["--version"], ["--help"],
                      ["--jobs", "0", "http://x.invalid/a.png"]])
    func otherCommandsAreStillKilledByAnEarlySignal(_ arguments: [String]) async throws {
        for signal in [SIGINT, SIGTERM] {
            let (result, seconds) = try await runPendingTimed(arguments, [signal])
            #expect(result.signal == signal, "\(arguments): status \(result.status), \(result.stdout) \(result.stderr)")
            #expect(result.stdoutBytes.isEmpty && result.stderrBytes.isEmpty,
                    "\(arguments): the command ran before the signal killed it: \(result.stdout) \(result.stderr)")
            #expect(seconds < 10, "\(arguments): ended \(seconds) s after its spawn")
        }
    }

    /// Two signals before the run begins: the second ends the process at once, killed by
    /// it, as a second Ctrl-C does during a run.
    @Test func aSecondEarlySignalKillsAtOnce() async throws {
        let result = try await runPending(["--json", server.url("/stall.png?twice")], [SIGINT, SIGTERM])
        #expect(result.signal == SIGINT || result.signal == SIGTERM, "status \(result.status): \(result.stdout)")
    }
}
