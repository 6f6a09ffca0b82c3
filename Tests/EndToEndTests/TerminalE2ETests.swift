import Foundation
import Testing
import TestSupport

/// Colour and the progress bar, in a real pseudo-terminal (SPEC §3).
@Suite struct TerminalE2ETests {
    let server: ScriptedServer
    let cli: CLI
    let png: [UInt8]

    init() throws {
        (server, cli) = try FixtureSite.start()
        png = FixtureSite.png
        server.route("/slow.png", ScriptedResponse.ok(png).delayed(0.25))
    }

    /// `count` distinct URLs that each take a quarter of a second.
    func slowURLs(_ count: Int) -> [String] {
        (1...count).map { server.url("/slow.png?\($0)") }
    }

    @Test func coloursThePhaseOnlyOnATerminalWithoutNoColor() async throws {
        let image = server.url("/images/red-64x48.png")
        let missing = server.url("/images/missing.png")
        let coloured = try await cli.runInTerminal([image, missing, "--no-progress"])
        #expect(coloured.status == 1)
        #expect(coloured.stdout.contains("\u{1B}[32msuccess\u{1B}[0m  \(image)  "), "\(coloured.stdout)")
        // On a terminal the URL column may be padded to the widest URL so far.
        let failureLine = coloured.stdout.components(separatedBy: "\r\n").first { $0.contains(missing) } ?? ""
        #expect(failureLine.hasPrefix("\u{1B}[31mfailure\u{1B}[0m  \(missing)  ") && failureLine.hasSuffix("  HTTP 404 Not Found"),
                "\(failureLine.debugDescription)")

        let plain = try await cli.runInTerminal([image, missing, "--no-progress"], environment: ["NO_COLOR": "1"])
        #expect(plain.stdout.contains("success  \(image)  "))
        #expect(!plain.stdout.contains("\u{1B}["), "NO_COLOR turns colour off")

        let redirected = try await cli.runInTerminal([image], shellTail: "> \(cli.cache.path)/out.txt")
        let file = try String(contentsOfFile: cli.cache.path + "/out.txt", encoding: .utf8)
        #expect(file.hasPrefix("success  \(image)  "), "no colour in a file even when stderr is a terminal")
        #expect(redirected.status == 0)
    }

    @Test func progressBarRedrawsAtMostTenTimesASecondAndNeverSharesALineWithResults() async throws {
        let urls = slowURLs(12)
        let started = Date()
        // The 404 goes first, so that later redraws show it in the failure count.
        let result = try await cli.runInTerminal(["--jobs", "2", server.url("/images/missing.png")] + urls)
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 1)
        let raw = result.stdout
        let draws = raw.components(separatedBy: "\u{1B}[K[").count - 1
        #expect(draws >= 3, "the bar was drawn (\(draws) times): \(raw.debugDescription)")
        #expect(Double(draws) <= elapsed * 10 + 2, "\(draws) redraws in \(elapsed) s")
        #expect(raw.contains("/13 URLs"), "done/total")
        #expect(raw.contains("1 failed"))
        #expect(raw.contains("ETA "))
        #expect(raw.contains(" KiB/s") || raw.contains(" B/s"))

        // What the terminal shows: every line is a whole result line or the
        // summary; no bar is left behind and none is glued to a result.
        let visible = CLI.visibleLines(raw).filter { !$0.isEmpty }
        #expect(visible.count == 14, "\(visible)")
        for line in visible.dropLast() {
            let text = line.replacingOccurrences(of: "\u{1B}[32m", with: "").replacingOccurrences(of: "\u{1B}[31m", with: "")
                .replacingOccurrences(of: "\u{1B}[0m", with: "")
            #expect(text.hasPrefix("success  http://") || text.hasPrefix("failure  http://"), "\(line.debugDescription)")
            #expect(!text.contains(" URLs"), "a bar glued to a result: \(line.debugDescription)")
        }
        #expect(visible.last?.hasPrefix("13 URLs: 12 success, 1 failure") == true, "\(visible.last ?? "")")
        for rawLine in raw.components(separatedBy: "\r\n") where rawLine.contains("success  http://") {
            #expect(rawLine.hasPrefix("\r\u{1B}[K") || rawLine.hasPrefix("\u{1B}[32msuccess"), "bar not erased before: \(rawLine.debugDescription)")
        }
    }

    /// Thousands of quick answers: one redraw per event would be thousands.
    @Test func aFastRunStillRedrawsAtMostTenTimesASecond() async throws {
        let list = (1...20_000).map { "http://127.0.0.1:9/fast/\($0).png" }.joined(separator: "\n")
        let file = try cli.cache.write("fast.txt", Array(list.utf8))
        let started = Date()
        let result = try await cli.runInTerminal(["--offline", "--progress", "--input", file], environment: ["NO_COLOR": "1"])
        let elapsed = Date().timeIntervalSince(started)
        #expect(result.status == 1)
        let draws = result.stdout.components(separatedBy: "\u{1B}[K[").count - 1
        // The first redraw comes 0.1 s into the run; a run shorter than that shows none.
        if elapsed > 0.3 { #expect(draws >= 1, "no redraw in \(elapsed) s") }
        #expect(Double(draws) <= elapsed * 10 + 2, "\(draws) redraws in \(elapsed) s")
        #expect(CLI.visibleLines(result.stdout).filter { $0.hasPrefix("empty    http://") }.count == 20_000)
    }

    @Test func progressBarGoesToStderrOnlyWithResultsInAFile() async throws {
        let urls = slowURLs(6)
        let out = cli.cache.path + "/results.txt"
        let list = try cli.cache.write("urls.txt", Array(urls.joined(separator: "\n").utf8))
        let result = try await cli.runInTerminal(["--jobs", "2", "--input", list], shellTail: "> \(out)")
        #expect(result.status == 0)
        #expect(result.stdout.contains("/6 URLs"), "the total of a list file is known: \(result.stdout.debugDescription)")
        let file = try String(contentsOfFile: out, encoding: .utf8)
        #expect(file.split(separator: "\n").count == 6)
        #expect(!file.contains("\u{1B}") && !file.contains("\r"), "results stay clean")
    }

    @Test func progressFlagsOverrideTheTerminalCheck() async throws {
        let urls = slowURLs(4)
        let off = try await cli.runInTerminal(["--no-progress"] + urls)
        #expect(!off.stdout.contains(" URLs  "), "\(off.stdout.debugDescription)")
        #expect(!off.stdout.contains("\u{1B}[K"))

        // One URL gets a bar only while its body arrives once its run is 0.5 s old
        // (`progressSingleURLDelay`): not after it is done. Done, with the run still waiting for
        // its upload to a slow remote tier, it drew a bar until the exit (tests7 saw one at load 14
        // when the run outlived its quarter-second URL).
        let late = server.url("/late.png")
        server.route("/late.png", ScriptedResponse.ok(png).delayed(0.6))
        let tier = try ScriptedServer()
        tier.route("/cache/" + (try CLI.md5sum(late)), handler: { request in
            request.method == "PUT" ? ScriptedResponse.status(201).delayed(1.2) : .status(404)
        })
        let single = try await cli.runInTerminal([late, "--remote-cache", tier.url("/cache/")])
        #expect(single.stdout.contains("success") && tier.totalRequests == 2, "\(single.stdout.debugDescription)")
        #expect(!single.stdout.contains("\u{1B}[K"), "one URL: no bar, \(single.stdout.debugDescription)")

        let piped = try await cli.run(["--progress", "--jobs", "1"] + slowURLs(8).map { $0 + "&b" })
        #expect(piped.status == 0)
        #expect(piped.stderr.contains("/8 URLs"), "--progress draws even when stderr is a pipe")
        #expect(!piped.stdout.contains("\u{1B}"))

        let plain = try await cli.run(slowURLs(3).map { $0 + "&c" })
        #expect(!plain.stderr.contains("\u{1B}[K"), "no bar when stderr is not a terminal")
    }

    /// SPEC §3: "`-q` prints only failures". On a terminal that includes the
    /// progress bar, unless `--progress` asks for it.
    @Test func quietHidesTheProgressBarOnATerminal() async throws {
        let server = try ScriptedServer()
        server.route("/slow.png", ScriptedResponse.ok(FixtureSite.png).delayed(0.25))
        let cli = try CLI()
        let urls = (1...4).map { server.url("/slow.png?\($0)") }
        let quiet = try await cli.runInTerminal(["-q", "--jobs", "1"] + urls)
        #expect(quiet.status == 0)
        #expect(!quiet.stdout.contains("\u{1B}[K") && !quiet.stdout.contains(" URLs"), "\(quiet.stdout.debugDescription)")
        let asked = try await cli.runInTerminal(["-q", "--progress", "--jobs", "1"] + urls.map { $0 + "&again" })
        #expect(asked.stdout.contains("\u{1B}[K"), "--progress still draws it: \(asked.stdout.debugDescription)")
    }
}
