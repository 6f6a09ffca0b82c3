import Foundation
import Testing
import TestSupport

/// Help, usage errors, completion scripts and the man page.
@Suite struct HelpE2ETests {
    let cli: CLI

    init() throws { cli = try CLI() }

    /// The long options `asyncfetch --help` lists (`--progress/--no-progress` gives both).
    func longOptions(_ help: String) -> [String] {
        var names: [String] = []
        for line in help.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("-") else { continue }
            let spec = trimmed.components(separatedBy: "  ").first ?? ""   // "-i, --input <file>"
            for part in spec.split(whereSeparator: { $0 == "," || $0 == "/" || $0 == " " }) where part.hasPrefix("--") {
                names.append(String(part))
            }
        }
        return names
    }

    @Test func helpDescribesEveryOptionWithItsDefault() async throws {
        let result = try await cli.run(["--help"])
        #expect(result.status == 0)
        let help = result.stdout
        let options = longOptions(help)
        for expected in ["--input", "--output", "--json", "--quiet", "--verbose", "--progress", "--no-progress", "--offline",
                         "--jobs", "--jobs-per-host", "--max-size", "--connect-timeout", "--timeout", "--retries", "--default-ttl", "--max-age",
                         "--refresh", "--stale-if-error", "--any", "--header", "--cacert", "--insecure", "--user-agent", "--cache-dir"] {
            #expect(options.contains(expected), "\(expected) missing from --help")
        }
        // Compared with runs of spaces and line breaks collapsed (help text wraps).
        let flat = help.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        for text in ["--jobs <n> Concurrent transfers over all hosts. (default: 256)",
                     "--jobs-per-host <n> Concurrent transfers to one host (fewer while it answers 429). (default: 6)", "(default: 64M)", "(default: 10s)",
                     "(default: 1m)", "(default: 2)", "(default: 7d)", "(default: as the server said)",
                     "(default: when stderr", "is a terminal, there is more than one URL and no -q)", "Exit status: 0 every URL succeeded",
                     "asyncfetch --input urls.txt --jobs 16 --json", "USAGE: asyncfetch [<options>] <url> ... asyncfetch"] {
            #expect(flat.contains(text), "\(text) missing from --help")
        }
        // Every option line is followed by help text (same line, or the next one).
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (index, line) in lines.enumerated() where line.hasPrefix("  -") {
            let sameLine = line.count > 26 && !line.dropFirst(26).trimmingCharacters(in: .whitespaces).isEmpty
            let nextLine = index + 1 < lines.count && lines[index + 1].hasPrefix(String(repeating: " ", count: 26))
            #expect(sameLine || nextLine, "no help text: \(line)")
        }
        #expect(try await cli.run(["help"]).stdout == help)
        #expect(try await cli.run(["--version"]).stdout.hasPrefix("0."))
    }

    @Test func cacheHelpListsItsCommandsAndCacheDirWorksBeforeIt() async throws {
        let cacheHelp = try await cli.run(["cache", "--help"])
        #expect(cacheHelp.status == 0)
        #expect(cacheHelp.stdout.contains("OVERVIEW: Inspect and maintain the cache."))
        #expect(cacheHelp.stdout.contains("  dir ") && cacheHelp.stdout.contains("  path "))
        // The body digest is XXH3-128 (SPEC §4); MD5 names the file, it checks nothing.
        let flatCacheHelp = cacheHelp.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
        #expect(flatCacheHelp.contains("verify Check every entry's body against its recorded length and XXH3-128 digest"), "\(cacheHelp.stdout)")
        #expect(try await cli.run(["help", "cache"]).stdout == cacheHelp.stdout)
        #expect(try await cli.run(["help", "cache", "path"]).stdout.contains("USAGE: asyncfetch cache path"))
        #expect(try await cli.run(["cache", "help"]).stdout == cacheHelp.stdout)
        let rmHelp = try await cli.run(["cache", "rm", "--help"])
        #expect(rmHelp.status == 0 && rmHelp.stdout.contains("USAGE: asyncfetch cache rm"))
        #expect(try await cli.run(["cache", "help", "rm"]).stdout == rmHelp.stdout)
        // No subcommand, with a --cache-dir: a usage error that names the subcommands (exit 2), not
        // 'Unknown option --cache-dir', and not help with exit 0 (a script that lost its subcommand must fail).
        for arguments in [["cache", "--cache-dir", "/tmp/x"], ["--cache-dir", "/tmp/x", "cache"]] {
            let bare = try await cli.run(arguments)
            #expect(bare.status == 2 && bare.stdout.isEmpty && bare.stderr.contains("'cache' needs a subcommand: dir, path"),
                    "\(arguments): \(bare.stderr)")
        }
        let moved = try await cli.run(["--cache-dir", cli.cache.path + "/elsewhere", "cache", "dir"])
        #expect(moved.status == 0)
        #expect(moved.stdout == cli.cache.path + "/elsewhere\n")
    }

    @Test func usageErrorsExit2WithOneLineAndAHint() async throws {
        let cases: [([String], String)] = [
            (["--bogus"], "asyncfetch: Unknown option '--bogus'"),
            ([], "asyncfetch: no URL given (name URLs as arguments, or a list with --input FILE)"),
            // The cache commands that take URLs say it in the same words.
            (["cache", "path"], "asyncfetch: no URL given (name URLs as arguments, or a list with --input FILE)"),
            (["cache", "rm"], "asyncfetch: no URL given (name URLs as arguments, or a list with --input FILE)"),
            (["cache", "pull", "--remote-cache", "http://127.0.0.1:9/tier/"],
             "asyncfetch: no URL given (name URLs as arguments, or a list with --input FILE)"),
            (["--jobs", "0", "http://127.0.0.1:9/x.png"], "asyncfetch: --jobs must be at least 1"),
            (["--timeout", "soon", "http://127.0.0.1:9/x.png"], "asyncfetch: The value 'soon' is invalid for '--timeout <duration>': give seconds"),
            (["-o", "a", "-o", "b", "http://127.0.0.1:9/x.png"], "asyncfetch: -o is given twice; give --output once"),
            (["-H", "no colon", "http://127.0.0.1:9/x.png"], "asyncfetch: -H expects 'Name: value', got 'no colon'"),
            (["-H", ": no name", "http://127.0.0.1:9/x.png"], "asyncfetch: -H expects 'Name: value', got ': no name'"),
            // A line break would send a second header (injection from a variable).
            (["-H", "X-A: 1\r\nX-B: 2", "http://127.0.0.1:9/x.png"],
             "asyncfetch: -H takes one header line, without a line break: got 'X-A: 1\\r\\nX-B: 2'"),
            (["-H", "X-A;\n", "http://127.0.0.1:9/x.png"], "asyncfetch: -H takes one header line, without a line break: got 'X-A;\\n'"),
            (["-H", "Bad Name: x", "http://127.0.0.1:9/x.png"],
             "asyncfetch: -H expects 'Name: value', got 'Bad Name: x': a name is letters, digits and !#$%&'*+-.^_`|~ only"),
            (["--user-agent", "bot/1\r\nX-Admin: 1", "http://127.0.0.1:9/x.png"],
             "asyncfetch: --user-agent takes one line, without a line break: got 'bot/1\\r\\nX-Admin: 1'"),
            (["-o", "x.png", "--input", "-"], "asyncfetch: -o/--output takes exactly one URL, named on the command line"),
            // A negative number is a value, not an option: the reason is the range.
            (["--jobs", "-1", "http://127.0.0.1:9/x.png"], "asyncfetch: --jobs must be at least 1"),
            (["--jobs-per-host", "0", "http://127.0.0.1:9/x.png"], "asyncfetch: --jobs-per-host must be at least 1"),
            (["--retries", "-1", "http://127.0.0.1:9/x.png"], "asyncfetch: --retries must be 0 or more"),
            (["--default-ttl", "-1", "http://127.0.0.1:9/x.png"], "asyncfetch: The value '-1' is invalid for '--default-ttl <duration>'"),
            (["--offline", "--refresh", "http://127.0.0.1:9/x.png"], "asyncfetch: --offline and --refresh contradict each other"),
            // An unset shell variable must not send the run to the default cache.
            (["--cache-dir", "", "http://127.0.0.1:9/x.png"], "asyncfetch: --cache-dir is empty"),
            (["--cache-dir=", "--offline", "http://127.0.0.1:9/x.png"], "asyncfetch: Missing value for '--cache-dir <dir>'"),
            // So must an empty list, template or CA file (the template named every file by its key, unsaid).
            (["-i", "", "http://127.0.0.1:9/x.png"], "asyncfetch: -i/--input is empty: give a file ('-' for standard input)"),
            (["-P", "photos", "--name", "", "http://127.0.0.1:9/x.png"], "asyncfetch: --name is empty: give a template"),
            (["--cacert", "", "http://127.0.0.1:9/x.png"], "asyncfetch: --cacert is empty: give a PEM file"),
            // A value that starts with '-' is taken for an option: how to give it.
            (["-o", "-x.png", "http://127.0.0.1:9/x.png"],
             "asyncfetch: Missing value for '-o <file>'; a value that starts with '-' is written --output=-x.png"),
            (["--user-agent", "-bot", "http://127.0.0.1:9/x.png"],
             "asyncfetch: Missing value for '--user-agent <string>'; a value that starts with '-' is written --user-agent=-bot"),
        ]
        for (arguments, reason) in cases {
            let result = try await cli.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            let lines = result.stderr.split(separator: "\n").map(String.init)
            #expect(lines.count == 2, "\(arguments): \(result.stderr)")
            #expect(lines.first?.hasPrefix(reason) == true, "\(arguments): \(result.stderr)")
            let help = arguments.first == "cache" && arguments.count > 1 && !arguments[1].hasPrefix("-") ? "cache \(arguments[1]) " : ""
            #expect(lines.last == "See 'asyncfetch \(help)--help'.", "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    /// swift-argument-parser suggested any option within 3 edits: `--bogus`
    /// got "Did you mean '--jobs'?", and `--jbos` (two letters swapped)
    /// '--json'. A suggestion is now one slip away (two for a long name), or
    /// the one option that starts with what was typed; else there is none.
    /// A cache command suggests among its own options.
    @Test func anUnknownOptionGetsASuggestionOnlyWhenOneIsClose() async throws {
        let cases: [([String], String)] = [
            (["--bogus"], "Unknown option '--bogus'"),
            (["--jbos", "4"], "Unknown option '--jbos'. Did you mean '--jobs'?"),
            (["--ouptut", "x.png"], "Unknown option '--ouptut'. Did you mean '--output'?"),
            (["--refesh"], "Unknown option '--refesh'. Did you mean '--refresh'?"),
            (["--verb"], "Unknown option '--verb'. Did you mean '--verbose'?"),
            (["--no-heuristics"], "Unknown option '--no-heuristics'. Did you mean '--no-heuristic'?"),
            (["--xyz"], "Unknown option '--xyz'"),
            (["cache", "prune", "--max-sise", "1G"], "Unknown option '--max-sise'. Did you mean '--max-size'?"),
            (["cache", "list", "--jsn"], "Unknown option '--jsn'. Did you mean '--json'?"),
            (["cache", "list", "--bogus"], "Unknown option '--bogus'"),
        ]
        for (arguments, reason) in cases {
            let result = try await cli.run(arguments + (arguments.first == "cache" ? [] : ["http://127.0.0.1:9/x.png"]))
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.split(separator: "\n").first.map(String.init) == "asyncfetch: \(reason)", "\(arguments): \(result.stderr)")
        }
    }

    /// A `cache` command's usage error pointed at `asyncfetch --help`, which
    /// lists the fetch options and none of that command's; an unknown option
    /// of `prune`, `path` or `rm` was reported as their missing argument
    /// ("give --max-size, --max-age or both" for `prune --max-sise 1G`), and
    /// an unknown command was an "Unexpected argument".
    @Test func cacheUsageErrorsPointAtTheirCommandsHelp() async throws {
        let cases: [([String], String, String)] = [
            (["cache", "prune"], "give --max-size, --max-age or both", "cache prune"),
            (["cache", "prune", "--max-sise", "1G"], "Unknown option '--max-sise'", "cache prune"),
            (["cache", "prune", "--max-size", "lots"], "The value 'lots' is invalid for '--max-size <size>'", "cache prune"),
            (["cache", "rm", "--bogus"], "Unknown option '--bogus'", "cache rm"),
            (["cache", "path", "--bogus"], "Unknown option '--bogus'", "cache path"),
            (["cache", "list", "--bogus"], "Unknown option '--bogus'", "cache list"),
            (["cache", "stats", "extra"], "Unexpected argument 'extra'", "cache stats"),
            (["cache", "verify", "--max-age", "1d"], "Unknown option '--max-age'", "cache verify"),
            (["--cache-dir", "/tmp/x", "cache", "rm"], "no URL given", "cache rm"),
            (["--json", "cache", "clear", "now"], "Unexpected argument 'now'", "cache clear"),
            (["cache", "pull", "http://127.0.0.1:9/x.png"], "cache pull needs --remote-cache URL", "cache pull"),
            // The unknown command is the problem, not the --cache-dir beside it.
            (["cache", "bogus", "--cache-dir", "/tmp/x"], "'bogus' is not a cache command: dir, path, list", "cache"),
            (["cache", "--bogus"], "Unknown option '--bogus'", "cache"),
            (["cache", "--cache-dir"], "Missing value for '--cache-dir <dir>'", "cache"),
            (["cache", "--cache-dir", ""], "--cache-dir is empty", "cache"),
            (["cache", "path", "-i", ""], "-i/--input is empty", "cache path"),
            // As for a run and cache path (it said "cannot read -i : No such file or directory"; review12b).
            (["cache", "pull", "-i", "", "--remote-cache", "http://127.0.0.1:9/c/"], "-i/--input is empty", "cache pull"),
        ]
        for (arguments, reason, command) in cases {
            let result = try await cli.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            let lines = result.stderr.split(separator: "\n").map(String.init)
            #expect(lines.count == 2, "\(arguments): \(result.stderr)")
            #expect(lines.first?.hasPrefix("asyncfetch: " + reason) == true, "\(arguments): \(result.stderr)")
            #expect(lines.last == "See 'asyncfetch \(command) --help'.", "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
        // `help` on a cache command that does not exist names the help to read, once.
        let topic = try await cli.run(["help", "cache", "bogus"])
        #expect(topic.status == 2 && topic.stderr == "asyncfetch: no help on 'cache bogus': try 'asyncfetch help cache' for the cache commands\n",
                "\(topic.stderr)")
    }

    @Test func completionScriptsCoverOptionsAndCacheCommands() async throws {
        for shell in ["bash", "zsh", "fish"] {
            let script = try await cli.run(["--generate-completion-script", shell])
            #expect(script.status == 0, "\(shell): \(script.stderr)")
            #expect(script.stdout.contains("input") && script.stdout.contains("no-progress") && script.stdout.contains("path"))
        }
        let bash = try await cli.run(["--generate-completion-script", "bash"]).stdout
        let file = try cli.cache.write("asyncfetch.bash", Array(bash.utf8))
        let probe = """
            source \(CLI.shellQuote(file))
            complete_line() {
              COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<< "$1"
              [[ "$1" == *" " ]] && COMP_WORDS+=("")
              COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
              _asyncfetch asyncfetch "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}"
              echo "${COMPREPLY[*]}"
            }
            complete_line "asyncfetch --inp"
            complete_line "asyncfetch cache pa"
            complete_line "asyncfetch --no-prog"
            """
        let result = try await runProcessOffPool("/bin/bash", ["-c", probe])
        #expect(result.stdout == "--input\npath\n--no-progress\n", "\(result.stdout)\(result.stderr)")
    }

    @Test func theManPageDescribesEveryOptionAndRendersCleanly() async throws {
        let page = Paths.packageRoot + "/man/asyncfetch.1"
        let source = try String(contentsOfFile: page, encoding: .utf8)
        let help = try await cli.run(["--help"]).stdout
        for option in longOptions(help) {
            #expect(source.contains(option.replacingOccurrences(of: "-", with: "\\-")), "\(option) missing from the man page")
        }
        // Every cache command (SPEC §7) has its own entry, with the options its help lists:
        // list, stats, prune and clear had none.
        let cacheHelp = try await cli.run(["help", "cache"]).stdout
        let commands = cacheHelp.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n")
            .compactMap { $0.hasPrefix("  ") && !$0.hasPrefix("   ") ? $0.split(separator: " ").first.map(String.init) : nil }
            .filter { $0.allSatisfy { $0.isLowercase } } ?? []
        #expect(Set(commands).isSuperset(of: ["dir", "path", "list", "stats", "verify", "prune", "rm", "clear"]), "\(commands)")
        let entries = source.components(separatedBy: ".TP\n")
        for command in commands {
            let entry = entries.first { $0.hasPrefix(".B") && $0.contains("asyncfetch cache \(command)") }
            #expect(entry != nil, "cache \(command) has no entry in the man page")
            let options = longOptions(try await cli.run(["help", "cache", command]).stdout.components(separatedBy: "OPTIONS:").last ?? "").filter { $0 != "--cache-dir" && $0 != "--help" }
            for option in options {
                #expect(entry?.contains(option.replacingOccurrences(of: "-", with: "\\-")) == true,
                        "cache \(command): \(option) missing from its man page entry")
            }
        }
        for section in [".SH EXIT STATUS", ".SH JSON LINES", ".SH SIGNALS", ".SH ENVIRONMENT", ".SH EXAMPLES"] {
            #expect(source.contains(section))
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") else { return }
        let rendered = try await runProcessOffPool("/usr/bin/groff", ["-man", "-Tutf8", "-ww", page])
        #expect(rendered.status == 0)
        #expect(rendered.stderr.isEmpty, "groff warnings: \(rendered.stderr)")
        #expect(rendered.stdout.contains("asyncfetch"))
    }

    /// Issue 6: every option's help shows its default, the `cache`
    /// subcommands' too. Checked for each option that takes a value.
    @Test func everyOptionWithAValueShowsItsDefault() async throws {
        for command in [["--help"], ["cache", "list", "--help"], ["cache", "prune", "--help"], ["cache", "path", "--help"]] {
            let help = try await cli.run(command).stdout
            guard let options = help.range(of: "OPTIONS:\n") else {
                Issue.record("\(command): no OPTIONS section")
                continue
            }
            var entries: [String] = []
            for line in help[options.upperBound...].split(separator: "\n") {
                if line.hasPrefix("  -") { entries.append(String(line)) } else if !entries.isEmpty { entries[entries.count - 1] += String(line) }
            }
            let withValue = entries.filter { ($0.dropFirst(2).components(separatedBy: "  ").first ?? "").contains("<") }
            #expect(!withValue.isEmpty, "\(command)")
            for entry in withValue {
                #expect(entry.contains("(default"), "\(command): \(entry)")
            }
        }
    }
}
