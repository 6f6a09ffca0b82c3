import Foundation
import Testing
import TestSupport

/// The command line never surprises (issue 16, items 2, 4, 7, 10): repeated
/// options, habitual curl/wget flags, values of the wrong form, runtime
/// errors, `help TOPIC`, completion.
@Suite struct CommandLineHabitsE2ETests {
    let cli: CLI

    init() throws { cli = try CLI() }

    @Test func repeatedInputsAccumulateOtherRepeatsAreUsageErrors() throws {
        let server = try FixtureSite.server()
        let a = try cli.cache.write("a.txt", Array(server.url("/images/red-64x48.png").utf8))
        let b = try cli.cache.write("b.txt", Array(server.url("/images/anim-33x17.gif").utf8))
        let both = try cli.run(["-i", a, "--input", b, "-H", "X-A: 1", "-H", "X-B: 2"])
        #expect(both.status == 0, "\(both.stderr)")
        #expect(both.stdout.split(separator: "\n").count == 2, "the URLs of both lists: \(both.stdout)")

        let cases: [([String], String)] = [
            (["-o", "a", "-o", "b", "http://x/"], "-o is given twice; give --output once"),
            (["--output", "a", "-o", "b", "http://x/"], "--output and -o are given twice"),
            (["--jobs", "2", "--jobs=3", "http://x/"], "--jobs is given twice"),
            (["--jobs-per-host", "2", "--jobs-per-host", "3", "http://x/"], "--jobs-per-host is given twice"),
            (["--shard", "1/2", "--shard=2/2", "http://x/"], "--shard is given twice"),
            (["--decode", "--decode", "http://x/"], "--decode is given twice"),
            (["--json", "--json", "http://x/"], "--json is given twice"),
            (["--progress", "--no-progress", "http://x/"], "--progress and --no-progress are given twice"),
            (["-qq", "http://x/"], "-q is given twice"),
            // -O is -P .: with another folder, one of them was silently ignored.
            (["-O", "-P", "d", "http://x/"], "-O and --output-dir DIR exclude each other"),
            (["--output-dir=d", "-qO", "http://x/"], "-O and --output-dir DIR exclude each other"),
            (["-O", "-O", "http://x/"], "-O is given twice"),
            (["cache", "prune", "--max-size", "1M", "--max-size", "2M"], "--max-size is given twice"),
        ]
        for (arguments, message) in cases {
            let result = try cli.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }

    /// Every habitual flag of the curl/wget table (docs/habits.md) gets its
    /// one-line answer (exit 2), and the table names each of them.
    @Test func everyHabitualFlagGetsItsAnswer() throws {
        let habits = try String(contentsOfFile: Paths.packageRoot + "/docs/habits.md", encoding: .utf8)
        let table = habits.components(separatedBy: "\n## asyncfetch for curl and wget users\n").dropFirst().first?
            .components(separatedBy: "\n## ").first ?? ""
        #expect(table.contains("| habitual option | what asyncfetch says |"), "docs/habits.md has the table")
        let rows: [(String, String)] = [
            ("-k", "curl's -k (--insecure): use --insecure"), ("--no-check-certificate", "use --insecure"), ("--ca-certificate", "use --cacert"),
            ("-s", "curl's -s (--silent): use -q"), ("--silent", "use -q"), ("-S", "curl's -S (--show-error): always on"), ("-L", "curl's -L (--location): always on: redirects are followed"),
            ("--location", "always on"), ("-f", "always on: an HTTP 4xx/5xx is a failure"), ("--fail", "always on"),
            ("--remote-name", "use -O"), ("-J", "not supported, because"), ("--create-dirs", "always on"),
            ("-C", "always on: a transfer cut off"), ("-c", "wget's and aria2's -c (--continue): always on"), ("--continue-at", "always on"),
            ("--compressed", "always on"), ("--user", "put the credentials in the URL"), ("-u", "put the credentials"),
            ("--netrc", "not supported, because"), ("--max-time", "use --timeout"), ("-m", "curl's -m (--max-time): use --timeout"), ("-T", "wget's -T (--timeout): use --timeout"),
            ("--retry", "use --retries"), ("-t", "wget's -t N (--tries): use --retries N-1"), ("--tries", "use --retries"),
            ("--retry-delay", "not supported, because the backoff is automatic"), ("--max-filesize", "use --max-size"),
            ("--parallel", "always on"), ("-Z", "curl's -Z (--parallel): always on"), ("--parallel-max", "use --jobs"), ("-j", "aria2's -j N (--max-concurrent-downloads): use --jobs N"),
            ("--parallel-max-host", "use --jobs-per-host N"), ("--max-connection-per-server", "use --jobs-per-host N"),
            ("-N", "wget's -N (--timestamping): always on: fresh copies are reused"), ("-z", "always on"), ("--time-cond", "always on"),
            ("-w", "curl's -w (--write-out): use --json"), ("--write-out", "use --json"), ("-#", "use --progress"), ("--no-progress-meter", "use --no-progress"),
            ("-x", "curl's -x (--proxy): not supported as an option, because proxies come from"), ("--proxy", "not supported as an option"),
            ("-X", "not supported, because asyncfetch only downloads"), ("-d", "curl's -d (--data): not supported, because"),
            ("-I", "not supported, because a HEAD"), ("-A", "curl's -A (--user-agent): use --user-agent STRING"), ("--referer", "use -H 'Referer"),
            ("-b", "curl's -b (--cookie): use -H 'Cookie"), ("-r", "not supported, because the cache keeps whole bodies"),
            ("--limit-rate", "not supported, because asyncfetch does not throttle"), ("-K", "use -i FILE"),
            ("-nc", "not supported, because -P replaces"), ("-nv", "use -q"), ("--http2", "always on"),
            ("--output-document", "use -o FILE"), ("--directory-prefix", "use -P DIR"), ("--input-file", "use -i FILE"),
            // wget's --wait got "Did you mean '--name'?"; -4, -6 and aria2c's --split a bare "Unknown option".
            ("--wait", "not supported, because asyncfetch does not pace requests"), ("--random-wait", "not supported"),
            ("-4", "not supported, because the system resolver picks the address"), ("-6", "not supported"),
            ("--ipv4", "not supported"), ("--inet6-only", "not supported"), ("--split", "not supported, because each URL is one transfer"),
            // A short option that means another thing to wget or aria2c names each tool's meaning: wget's -w
            // (--wait) and aria2's -s (--split) got curl's answer; --http1.1 was "always on".
            ("--http1.1", "not supported, because the HTTP version is not chosen by hand"), ("--http3", "not supported"),
            ("-U", "wget's and aria2's -U (--user-agent): use --user-agent STRING; curl's -U (--proxy-user)"),
            ("-e", "curl's -e (--referer): use -H 'Referer: …'; wget's -e (--execute)"), ("-D", "use -v"),
            ("--server-response", "use -v"), ("-n", "curl's -n (--netrc): not supported"),
            // wget's log file options were "Unknown option" ('-a': "Did you mean '--any'?" is not said for a short one).
            ("--output-file", "not supported as an option, because the report goes to standard output and standard error"),
            ("--append-output", "not supported as an option"), ("-a", "wget's -a LOGFILE (--append-output): not supported as an option"),
        ]
        for (flag, answer) in rows {
            let result = try cli.run([flag, "http://127.0.0.1:9/x.png"])
            #expect(result.status == 2, "\(flag)")
            #expect(result.stderr == "asyncfetch: \(flag): \(answer)" + result.stderr.dropFirst("asyncfetch: \(flag): \(answer)".count),
                    "\(flag): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
            #expect(table.contains("`\(flag)"), "the curl/wget table in docs/habits.md names \(flag)")
        }
        for (flag, other) in [("-w", "wget's -w (--wait): not supported, because asyncfetch does not pace requests"),
                              ("-s", "aria2's -s N (--split): not supported, because each URL is one transfer"),
                              ("-T", "curl's -T (--upload-file): not supported"), ("-m", "wget's -m (--mirror): not supported"),
                              ("-c", "curl's -c (--cookie-jar): not supported"), ("-t", "aria2's -t (--timeout): use --timeout"),
                              ("-S", "wget's -S (--server-response): use -v"), ("-N", "curl's -N (--no-buffer): not supported")] {
            let result = try cli.run([flag, "http://127.0.0.1:9/x.png"])
            #expect(result.stderr.contains("; " + other), "\(flag): \(result.stderr)")
        }
        let wget = try cli.run(["-O", "cat.png", "http://127.0.0.1:9/x.png"])
        #expect(wget.status == 2 && wget.stderr.contains("wget's -O FILE is -o FILE"), "\(wget.stderr)")
        // wget's value joined to -O, or `-O -`: the same answer, not "Unknown option '--'" or '-u',
        // and `-O -` does not fetch '-' as a URL.
        for (arguments, answer) in [(["-qO-"], "wget's -O - is -o -"), (["-O-"], "wget's -O - is -o -"),
                                    (["-O", "-"], "wget's -O - is -o -"), (["-Ocat.png"], "wget's -O FILE is -o FILE")] {
            let joined = try cli.run(arguments + ["http://127.0.0.1:9/x.png"])
            #expect(joined.status == 2 && joined.stderr.hasPrefix("asyncfetch: \(arguments.joined(separator: " ")): -O takes no file name")
                    && joined.stderr.contains(answer) && joined.stderr.split(separator: "\n").count == 1, "\(arguments): \(joined.stderr)")
        }
        // curl's -O joined to other flags is still curl's.
        #expect(try cli.run(["-Oq", "--offline", "http://127.0.0.1:9/x.png"]).status == 1)
        // The flags that are asyncfetch options work as the table says.
        #expect(try cli.run(["-q", "--offline", "http://127.0.0.1:9/x.png"]).status == 1)
        #expect(try cli.run(["-P", cli.cache.path + "/d", "--offline", "http://127.0.0.1:9/x.png"]).status == 1)
    }

    /// The asyncfetch column of every row of the curl/wget table (docs/habits.md)
    /// runs as written; the curl/wget column's flags get their answers.
    @Test func everyRowOfTheCurlAndWgetTableWorks() throws {
        let server = try FixtureSite.server()
        let url = server.url("/images/red-64x48.png"), other = server.url("/images/anim-33x17.gif")
        let list = try cli.cache.write("urls.txt", Array("\(url)\n\(other)\n".utf8))
        let named = try cli.cache.write("named.txt", Array("\(url)\tmine.png\n".utf8))
        let rows: [[String]] = [
            [url, "-o", cli.cache.path + "/cat.png"],                       // fetch to a file
            ["-i", list, "-P", cli.cache.path + "/dir"],                    // a batch into a folder
            ["-i", named, "-P", cli.cache.path + "/named"],                 // name each file in the list
            [url, "-o", "-"],                                               // body to stdout
            ["--jobs", "16", url, other],                                   // many in parallel
            ["-i", list],                                                   // URLs from a file
            ["--refresh", url],                                             // don't download again (ask anyway)
            ["--offline", url],                                             // only what is already here
            ["-q", url], ["-v", url],                                       // quiet / verbose
            ["--json", url],                                                // machine-readable results
            ["--retries", "2", url],                                        // retries
            ["--connect-timeout", "10", "--timeout", "60", url],            // timeouts
            ["--max-size", "64M", url],                                     // size limit
            ["-H", "Name: value", url],                                     // extra header
            ["--insecure", url],                                            // no TLS checks (a warning)
        ]
        for row in rows {
            let result = try cli.run(row)
            #expect(result.status == 0, "\(row): \(result.stdout)\(result.stderr)")
        }
        #expect(FileManager.default.fileExists(atPath: cli.cache.path + "/named/mine.png"))
        #expect(FileManager.default.fileExists(atPath: cli.cache.path + "/dir/anim-33x17.gif"))
        for habit in [["-fsSL", url], ["-w", "%{json}", url], ["--parallel", "--parallel-max", "16", url], ["-N", url], ["-t", "3", url]] {
            let result = try cli.run(habit)
            #expect(result.status == 2 && result.stderr.split(separator: "\n").count == 1, "\(habit): \(result.stderr)")
        }
        #expect(try cli.run(["-fsSL", url]).stderr.hasPrefix("asyncfetch: -f: always on"))
    }

    @Test func invalidValuesListTheAcceptedFormsAndRuntimeErrorsDoNotPointAtHelp() throws {
        let timeout = try cli.run(["--timeout", "500ms", "http://127.0.0.1:9/x.png"])
        #expect(timeout.status == 2)
        #expect(timeout.stderr.contains("'500ms' is invalid for '--timeout <duration>': give seconds (30, 0.5)"), "\(timeout.stderr)")
        #expect(timeout.stderr.contains("90s, 5m, 1.5h, 7d") && timeout.stderr.contains("500ms is 0.5"))
        let prune = try cli.run(["cache", "prune", "--max-size", "10X"])
        #expect(prune.status == 2)
        #expect(prune.stderr.contains("'10X' is invalid for '--max-size <size>': give bytes (65536) or a number with K, M or G"),
                "\(prune.stderr)")

        let file = try cli.cache.write("not-a-dir", [])
        for arguments in [["--cache-dir", file + "/sub", "http://127.0.0.1:9/x.png"], ["-i", "/no/such/list"],
                          ["cache", "--cache-dir", file + "/sub", "list"]] {
            let result = try cli.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(!result.stderr.contains("--help"), "a runtime error does not point at --help: \(result.stderr)")
        }
    }

    @Test func helpOnAnUnknownTopicIsAUsageError() throws {
        let bogus = try cli.run(["help", "bogus"])
        #expect(bogus.status == 2)
        #expect(bogus.stderr.contains("no help on 'bogus'"))
        #expect(bogus.stdout.isEmpty)
        #expect(try cli.run(["help"]).status == 0)
        #expect(try cli.run(["help", "cache"]).status == 0)
        #expect(try cli.run(["help", "cache", "prune"]).stdout.contains("--max-size"))
        let cacheBogus = try cli.run(["help", "cache", "bogus"])
        #expect(cacheBogus.status == 2 && cacheBogus.stderr.contains("no help on 'cache bogus'"), "\(cacheBogus.stderr)")
    }

    @Test func bashCompletionOffersDirectoriesAfterCacheDirAndNoVersionToCacheSubcommands() throws {
        let script = try cli.run(["--generate-completion-script", "bash"])
        #expect(script.status == 0)
        let text = script.stdout
        let cacheDir = try #require(text.range(of: "'--cache-dir')"), "\(text.prefix(400))")
        let after = text[cacheDir.upperBound...].prefix(200)
        #expect(after.contains("-d") || after.contains("directories") || after.contains("-A directory"), "\(after)")
        // The cache subcommands' functions offer no --version.
        for part in text.components(separatedBy: "_asyncfetch_cache_").dropFirst() {
            let body = part.components(separatedBy: "\n}\n").first ?? ""
            #expect(!body.contains("--version"), "\(body.prefix(300))")
        }
    }

    /// The README says where `make demo` left the binary, and the demo ends with what to do next.
    @Test func theDemoEndsWithANextStep() throws {
        let readme = try String(contentsOfFile: Paths.packageRoot + "/README.md", encoding: .utf8)
        #expect(readme.contains("`make demo` leaves the release binary at\n`.build/release/asyncfetch`"))
        let demo = try String(contentsOfFile: Paths.packageRoot + "/Tests/tools/demo.sh", encoding: .utf8)
        let ending = demo.components(separatedBy: "Done. The binary is").last ?? ""
        #expect(ending.contains("Next:") && ending.contains("make install"), "\(ending)")
    }

    @Test func columnsAreAlignedAndTheSummaryShowsZeroEmpty() throws {
        let server = try FixtureSite.server()
        let urls = [server.url("/images/red-64x48.png"), server.url("/images/missing.png")]
        let result = try cli.run(urls)
        #expect(result.stderr.contains("1 success, 1 failure, 0 empty"), "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2)
        #expect(lines.allSatisfy { $0.dropFirst(7).hasPrefix("  http") }, "the URL column starts at the same place: \(lines)")
        // On a terminal the column after the URL starts in one place too.
        let long = server.url("/images/progressive-90x60.jpg"), short = server.url("/images/red-64x48.png")
        #expect(try cli.run([long, short]).status == 0)
        // Cache answers, in the order given: the longer URL first sets the width (the column only widens).
        let terminal = try cli.runInTerminal(["--no-progress", "--offline", long, short], environment: ["NO_COLOR": "1"])
        let shown = CLI.visibleLines(terminal.stdout).filter { $0.hasPrefix("success") }
        #expect(shown.count == 2, "\(terminal.stdout)")
        let pathColumns = Set(shown.map { $0.firstRange(of: "/" + cli.cacheDir.dropFirst())?.lowerBound.utf16Offset(in: $0) })
        #expect(pathColumns.count == 1 && !pathColumns.contains(nil), "\(shown)")
        let list = try cli.run(["cache", "list"]).stdout.split(separator: "\n").map(String.init)
        let starts = list.map { $0.firstRange(of: "http")?.lowerBound.utf16Offset(in: $0) }
        #expect(Set(starts).count == 1, "\(list)")
    }

    /// wget's and aria2c's habits that got a wrong answer (`-nd` was read as
    /// curl's `-n`, "credentials are read only from the URL"), a bare
    /// "Unknown option", or a wrong guess (`--dir` → "Did you mean
    /// '--link'?", `--out` → '--input'): each gets its one line (exit 2), and
    /// docs/habits.md lists it.
    @Test func moreHabitsOfWgetAndAria2GetTheirAnswer() throws {
        let habits = try String(contentsOfFile: Paths.packageRoot + "/docs/habits.md", encoding: .utf8)
        let rows: [(String, String)] = [
            ("-nd", "always on: files go straight into -P DIR"), ("-nH", "always on: files go straight into -P DIR"),
            ("--no-directories", "always on"), ("-np", "not supported, because asyncfetch does not crawl"),
            ("--recursive", "not supported, because asyncfetch does not crawl"), ("--mirror", "not supported"),
            ("--max-redirs", "not supported, because redirects are always followed, at most 10"),
            ("--max-redirect", "not supported, because redirects are always followed"),
            ("--dir", "use -P DIR"), ("--out", "use -o FILE for one URL"), ("--max-tries", "use --retries N"),
            ("--retry-wait", "not supported, because the backoff is automatic"),
            ("--check-certificate", "always on: TLS certificates are verified"), ("--all-proxy", "not supported as an option"),
            ("--read-timeout", "use --timeout DURATION"), ("--dns-timeout", "use --connect-timeout DURATION"),
            ("--retry-connrefused", "always on: connect errors"), ("--retry-all-errors", "always on"),
            // A bare "Unknown option" until session 27.
            ("-V", "curl's and wget's -V (--version): use --version; aria2's -V (--check-integrity)"),
            ("--url", "name each URL as an argument"), ("--show-progress", "use --progress"),
            ("--content-disposition", "not supported, because a name chosen by the server is not safe to trust"),
            ("--capath", "use --cacert FILE"), ("--ca-directory", "use --cacert FILE"),
            ("--cert", "not supported, because asyncfetch sends no TLS client certificate"), ("--key", "not supported"),
            ("--certificate", "not supported"), ("--private-key", "not supported"),
            ("-E", "curl's -E (--cert): not supported, because asyncfetch sends no TLS client certificate; wget's -E (--adjust-extension)"),
        ]
        for (flag, answer) in rows {
            let result = try cli.run([flag, "http://127.0.0.1:9/x.png"])
            #expect(result.status == 2, "\(flag)")
            #expect(result.stderr.hasPrefix("asyncfetch: \(flag): \(answer)"), "\(flag): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
            #expect(habits.contains("`\(flag)`"), "docs/habits.md names \(flag)")
        }
        // aria2c's --check-certificate=false, as typed.
        let aria = try cli.run(["--check-certificate=false", "http://127.0.0.1:9/x.png"])
        #expect(aria.status == 2 && aria.stderr.contains("--insecure turns the checks off"), "\(aria.stderr)")
        // wget's -r is not curl's range: the answer says both.
        #expect(try cli.run(["-r", "http://127.0.0.1:9/x.png"]).stderr.contains("does not crawl"))
    }

    /// A value joined to its short option (`-ocat.png`, curl's `-H'X: 1'`,
    /// wget's `-Pphotos`, `-iurls.txt`, `-qo-`) was read as a cluster of flags:
    /// "Unknown option '-.'", "Unknown option '-X'", "Unknown option
    /// '-Pphotos'". Each is now the option and its value, as curl, wget and
    /// getopt take them; an option's value is never split, nor what follows `--`.
    @Test func aValueJoinedToItsShortOptionIsTakenAsCurlAndWgetTakeIt() throws {
        let server = try FixtureSite.server()
        let url = server.url("/images/red-64x48.png")
        let dir = cli.cache.path
        let output = try cli.run(["-o\(dir)/cat.png", "-H", "X-Joined: no", "-HX-Attached: yes", url])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir + "/cat.png"))
        #expect(server.requests("/images/red-64x48.png").last?.header("X-Attached") == "yes", "-H's value reached the server")
        let folder = try cli.run(["-P\(dir)/photos", "--refresh", url])
        #expect(folder.status == 0 && FileManager.default.fileExists(atPath: dir + "/photos/red-64x48.png"), "\(folder.stderr)")
        let list = try cli.cache.write("list.txt", Array("\(url)\n".utf8))
        let listed = try cli.run(["-qi\(list)"])
        #expect(listed.status == 0 && listed.stdout.isEmpty, "\(listed.stdout)\(listed.stderr)")
        let body = try cli.run(["-qo-", url])
        #expect(body.status == 0 && body.stdoutBytes == FixtureSite.png, "\(body.stderr)")
        let path = try cli.run(["cache", "path", "-i\(list)"])
        #expect(path.status == 0 && path.stdout.hasPrefix(dir), "\(path.stdout)\(path.stderr)")
        // A joined value that starts with '-' is the value, as getopt and curl read it: the file
        // -x.png (it was split into `-o -x.png`, "Missing value for '-o <file>'"; review12b).
        for typed in ["-o-x.png", "-qo-y.png"] {
            let dashed = try runProcess(CLI.binary, [typed, url], environment: ["ASYNCFETCH_CACHE_DIR": cli.cacheDir],
                                        directory: dir)
            let file = dir + "/" + typed.dropFirst(typed.hasPrefix("-q") ? 3 : 2)
            #expect(dashed.status == 0 && FileManager.default.contents(atPath: file).map(Array.init) == FixtureSite.png,
                    "\(typed): \(dashed.stderr)")
        }
        // An option's value stays whole; wget's -Ocat.png still gets its answer.
        let agent = try cli.run(["--user-agent", "-obot", url])
        #expect(agent.status == 2 && agent.stderr.hasPrefix("asyncfetch: Missing value for '--user-agent <string>'"), "\(agent.stderr)")
        let wget = try cli.run(["-Ocat.png", url])
        #expect(wget.status == 2 && wget.stderr.contains("wget's -O FILE is -o FILE"), "\(wget.stderr)")
    }
}
