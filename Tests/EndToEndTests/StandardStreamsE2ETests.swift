import Foundation
import Testing
import TestSupport

/// The tool started with stdin, stdout or stderr closed, as a shell's `<&-`,
/// `>&-` or `2>&-` leaves it (docs/output.md, "Closed standard streams").
@Suite struct StandardStreamsE2ETests {
    /// `sh -c 'exec asyncfetch ARGUMENTS REDIRECTION'`.
    static func run(_ cli: CLI, _ arguments: [String], _ redirection: String) async throws -> ProcessResult {
        let command = "exec " + ([CLI.binary] + arguments).map(CLI.shellQuote).joined(separator: " ") + " " + redirection
        return try await runProcessOffPool("/bin/sh", ["-c", command], environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
    }

    /// `>&-`: the results cannot be written, as on a full disk: exit status
    /// 1 and the reason on stderr (curl's `>&-` is its write error, 23;
    /// coreutils say "write error: Bad file descriptor"), while the run
    /// still fetches and stores. Before, the first descriptor the process
    /// opened (libdispatch's eventfd) took number 1: the lines went into
    /// it and failed with "Invalid argument".
    @Test func closedStdoutIsAFailedWriteAndTheWorkIsStillDone() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(FixtureSite.png, headers: [("Cache-Control", "max-age=600")]))
        server.route("/b.png", .ok(FixtureSite.png, headers: [("Cache-Control", "max-age=600")]))
        let cli = try CLI()
        let (a, b) = (server.url("/a.png"), server.url("/b.png"))
        for arguments in [[a], ["--json", b]] {
            let result = try await Self.run(cli, arguments, ">&-")
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr == "asyncfetch: cannot write standard output: Bad file descriptor\n", "\(arguments)")
        }
        // Nothing to write (-q, every URL a success): nothing lost, status 0.
        let quiet = try await Self.run(cli, ["-q", a, b], ">&-")
        #expect(quiet.status == 0, "\(quiet.stderr)")
        #expect(quiet.stderr.isEmpty)
        let stored = try await cli.run(["--offline", a, b])
        #expect(stored.status == 0, "\(stored.stdout)\(stored.stderr)")
        #expect(server.requests("/a.png").count == 1 && server.requests("/b.png").count == 1)
    }

    /// `2>&-`: messages are lost, the results and the exit status are not.
    @Test func closedStderrKeepsTheResultsAndTheStatus() async throws {
        let server = try ScriptedServer()
        server.route("/a.png", .ok(FixtureSite.png))
        server.route("/gone.png", .status(404))
        let cli = try CLI()
        let result = try await Self.run(cli, ["-v", server.url("/a.png"), server.url("/gone.png")], "2>&-")
        #expect(result.status == 1)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 2, "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("success") && $0.contains("/a.png") }, "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("failure") && $0.contains("HTTP 404") }, "\(result.stdout)")
    }

    /// `-i - <&-`: stdin cannot be read, an unreadable `--input` like any
    /// other (exit status 2), said before the run starts. Before, the read
    /// went to a descriptor libdispatch had opened ("Invalid argument"), then
    /// failed as the run went ("reading --input stdin: Bad file descriptor", 1).
    @Test func closedStdinIsAnUnreadableInput() async throws {
        let cli = try CLI()
        for arguments in [["-i", "-"], ["--json", "http://127.0.0.1:9/a.png", "-i", "-"]] {
            let result = try await Self.run(cli, arguments, "<&-")
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr == "asyncfetch: cannot read -i -: standard input is closed or not open for reading\n",
                    "\(arguments)")
            #expect(result.stdout.isEmpty, "nothing ran: \(arguments)")
        }
        // The option as typed: `cache path -i` was told of an --input it had not given.
        for (option, typed) in [("-i", "-i"), ("--input", "--input"), ("--input=-", "--input")] {
            let listed = try await Self.run(cli, ["cache", "path", option] + (option.contains("=") ? [] : ["-"]), "<&-")
            #expect(listed.status == 2)
            #expect(listed.stderr == "asyncfetch: cannot read \(typed) -: standard input is closed or not open for reading\n",
                    "\(option): \(listed.stderr)")
        }
    }

    /// No `/dev/null` (a chroot or container without /dev; here a mount
    /// namespace with an empty tmpfs over /dev) and a closed descriptor that
    /// therefore cannot be reserved: the process ends with status 2 and the
    /// reason on stderr before it opens anything, so no file can take the
    /// free number and receive a write meant for stdout or stderr. Before,
    /// the start went on (the Swift runtime and the locale opened files, any
    /// of which could take the number) and `main` gave the same message.
    @Test(.enabled(if: CacheE2E.canMount, "needs unshare -m and mount (root in a VM or privileged container)"))
    func withoutDevNullAClosedDescriptorEndsTheProcessBeforeItOpensAnything() async throws {
        let cli = try CLI()
        for (redirection, name) in [("<&-", "standard input"), (">&-", "standard output")] {
            let trace = cli.cache.path + "/trace.txt"
            let inner = "exec " + CLI.shellQuote(CLI.binary) + " --offline http://127.0.0.1:9/a.png " + redirection
            let command = "mount -t tmpfs none /dev && exec strace -f -qq -e trace=open,openat,creat -o "
                + CLI.shellQuote(trace) + " /bin/sh -c " + CLI.shellQuote(inner)
            let result = try await runProcessOffPool("/usr/bin/unshare", ["-m", "/bin/sh", "-c", command],
                                                     environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
            #expect(result.status == 2, "\(redirection): \(result.stderr)")
            #expect(result.stderr == "asyncfetch: \(name) is closed, and /dev/null could not be opened in its place: "
                    + "No such file or directory\n", "\(redirection)")
            let lines = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            let reservation = try #require(lines.firstIndex { $0.contains("\"/dev/null\"") }, "\(lines)")
            let later = lines[reservation...].dropFirst().filter { $0.contains("open") || $0.contains("creat(") }
            #expect(later.isEmpty, "opened after the failed reservation: \(later)")
            #expect(!FileManager.default.fileExists(atPath: cli.cacheDir), "nothing ran")
        }
    }

    /// A stdout pipe its parent made non-blocking (Node.js and Python
    /// programs do; `O_NONBLOCK` is on the pipe, shared with the child),
    /// read by a parent that is slow to start: every line arrives whole.
    /// Before, the first write that found the pipe full failed with EAGAIN
    /// and every later line was lost ("cannot write standard output:
    /// Resource temporarily unavailable", exit 1).
    @Test func aNonBlockingStdoutLosesNoLine() async throws {
        let cli = try CLI()
        let count = 3000   // ~ 200 KB of lines: three times what the pipe holds
        let list = cli.cache.path + "/urls.txt"
        try (0..<count).map { "http://127.0.0.1:9/n/\($0).png\n" }.joined().write(toFile: list, atomically: true, encoding: .utf8)
        let parent = """
            import os, subprocess, sys, time
            r, w = os.pipe()
            os.set_blocking(w, False)
            child = subprocess.Popen(sys.argv[1:], stdout=w)
            os.close(w)
            time.sleep(0.5)
            out = bytearray()
            while chunk := os.read(r, 65536):
                out += chunk
            sys.stdout.buffer.write(out)
            sys.exit(child.wait())
            """
        let result = try await runProcessOffPool("/usr/bin/python3", ["-c", parent, CLI.binary, "--offline", "--json", "-i", list],
                                                 environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
        #expect(result.status == 1, "every URL an --offline miss")
        #expect(result.stderr.isEmpty, "\(result.stderr)")
        let lines = try #require(CLI.jsonLines(result.stdout), "every line whole JSON")
        #expect(lines.filter { $0["phase"] as? String == "empty" }.count == count)
        #expect((lines.last?["summary"] as? [String: Any])?["empty"] as? Int == count)
    }

    /// Results that cannot be written (stdout on a full disk) must not end
    /// in exit status 0: a script would take the missing lines for success.
    /// A failed write that is not a closed pipe (a full disk) loses the
    /// lines, not the work: the run goes on, and every URL is stored as it
    /// would have been, whenever the first line failed. Before, a `--json`
    /// run stopped at its `loading` line, and its transfers (here slow to
    /// answer) were never stored.
    @Test func resultsThatCannotBeWrittenAreAFailure() async throws {
        let server = try ScriptedServer()
        var slow = ScriptedResponse.ok(FixtureSite.png, headers: [("Cache-Control", "max-age=600")])
        slow.delayBeforeHeaders = 0.5
        server.route("/a.png", slow)
        let cli = try CLI()
        let url = server.url("/a.png")
        let runs: [[String]] = [["--json", url, url + "?2"], [url], ["--json", url], ["cache", "list"],
                                ["cache", "list", "--json"], ["cache", "stats", "--json"], ["cache", "dir"], ["--help"]]
        for arguments in runs {
            let command = "exec " + ([CLI.binary] + arguments).map(CLI.shellQuote).joined(separator: " ") + " > /dev/full"
            let result = try await runProcessOffPool("/bin/sh", ["-c", command], environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir])
            #expect(result.status == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("asyncfetch: cannot write standard output: No space left on device"),
                    "\(arguments): \(result.stderr)")
        }
        #expect(server.requests("/a.png").count == 2, "the first run stored both URLs; the others were hits")
        let stored = try await cli.run(["--offline", url, url + "?2"])
        #expect(stored.status == 0, "\(stored.stdout)\(stored.stderr)")
    }
}
