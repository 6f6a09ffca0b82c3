import ArgumentParser
import Loader
import struct Support.ThreadStartError
import func Support.textPercentEncodingInvalidUTF8
#if canImport(Glibc)
import Glibc
#endif

/// Entry point: parse, run, and map every outcome to SPEC §3's exit codes
/// (swift-argument-parser's own usage code, 64, becomes 2).
@main
enum Main {
    static func main() async {
        MallocPolicy.apply()
        useUTF8Characters()
        guard StandardStreams.reserved else { end(2) }   // not reached: the C corner has ended the process
        let given = ArgumentCheck.separatingAttachedValues(givenArguments())   // `-ocat.png` as `-o cat.png`
        let (root, arguments) = route(given)
        // Only a fetch run reports a signal; anything else is killed by it (`EarlySignals`).
        if root != AsyncFetch.self { EarlySignals.giveBack() }
        let status: Int32
        do {
            if root != CompletionRoot.self {
                try checkHelpTopic(given)
                if root == CacheRoot.self { try checkCacheCommand(arguments) }
                try ArgumentCheck.check(arguments)
            }
            if root == AsyncFetch.self, let settings = QuickParse.parse(arguments) {
                try await FetchRun.run(settings)
                end(flushOutput(0))
            }
            var command: ParsableCommand
            if root == AsyncFetch.self, let (rest, urls) = URLArguments.extract(arguments),
               var fetch = try AsyncFetch.parseAsRoot(rest + [urls[0]]) as? AsyncFetch {
                fetch.urls = urls
                try fetch.validate()
                command = fetch
            } else {
                command = try root.parseAsRoot(arguments)
            }
            if !(command is AsyncFetch) { EarlySignals.giveBack() }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            status = 0
        } catch {
            EarlySignals.giveBack()   // help, version, a usage error: no run (nothing once one started)
            status = exitStatus(for: error, root: root, arguments: arguments,
                                help: helpCommand(root: root, arguments: arguments, given: given))
        }
        end(flushOutput(status))
    }

    /// The arguments after the program's name, as `CommandLine.arguments`
    /// but with a byte that is not UTF-8 written `%XX` rather than U+FFFD
    /// (`textPercentEncodingInvalidUTF8`): a URL argument then names the
    /// bytes given, as the same line of an `--input` list does.
    static func givenArguments() -> [String] {
        (1..<Int(CommandLine.argc)).map { index in
            guard let argument = CommandLine.unsafeArgv[index] else { return "" }
            // Rebound for all of its bytes (the terminating NUL left out), not only the first.
            let length = strlen(argument)
            return argument.withMemoryRebound(to: UInt8.self, capacity: length) {
                textPercentEncodingInvalidUTF8(UnsafeBufferPointer(start: $0, count: length))
            }
        }
    }

    /// Reads the bytes handed to C as UTF-8, which Swift strings are,
    /// whatever the user's locale: libcurl turns an internationalised host
    /// name (`bücher.example`) into its `xn--` form with libidn2 in the
    /// LC_CTYPE character set, and in the C locale a process starts in (no
    /// `setlocale`, or `LANG=C` under cron) every such URL was an
    /// invalid-url "URL using bad/illegal format or missing URL". Only
    /// LC_CTYPE changes: messages and number formats stay the C locale's.
    /// Without a C.UTF-8 locale (glibc before 2.35 may lack it) the user's
    /// own is the next best; if neither loads, IDN hosts fail as before.
    static func useUTF8Characters() {
        if setlocale(LC_CTYPE, "C.UTF-8") == nil { _ = setlocale(LC_CTYPE, "") }
    }

    /// Ends the process with `status` once the output is flushed, without
    /// `exit`'s teardown: `exit` runs the static destructors and `atexit`
    /// handlers (the Swift runtime's, OpenSSL's cleanup, libcurl's) on this
    /// thread while the transfer loops, the completion workers and the
    /// cooperative pool's threads still run, and a thread that then touches
    /// torn-down state crashes (a segfault whose address is its instruction
    /// pointer, seen once in a 100,000-URL batch; OpenSSL's cleanup was seen
    /// running beside a live transfer loop). Everything the run must leave
    /// behind is done before this point (results printed, temporary files
    /// removed, `--sync` flushed); the signal path ends the same way
    /// (`Interruption`).
    static func end(_ status: Int32) -> Never {
        EarlySignals.giveBack()   // a signal no run took over ends the process by itself
        _exit(status)
    }

    /// Which command parses the arguments. `AsyncFetch` takes URLs as
    /// positional arguments, so it cannot also route subcommands:
    /// `cache …` goes to `CacheRoot` (also after a leading `--cache-dir DIR`,
    /// or with one between `cache` and the subcommand, which moves behind the
    /// subcommand), and `help [cache …]` becomes `[cache …] --help`. Neither
    /// word is ever a URL. Completion scripts come from `CompletionRoot`.
    static func route(_ arguments: [String]) -> (ParsableCommand.Type, [String]) {
        if arguments.contains(where: { $0 == "--generate-completion-script" || $0.hasPrefix("--generate-completion-script=") }) {
            return (CompletionRoot.self, arguments)
        }
        var rest = arguments[...]
        var cacheDir = takeCacheDir(from: &rest)
        if let command = commandAfterOptions(rest) {
            return route(cacheDir + command)
        }
        if rest.first == "help" {
            return route(cacheDir + Array(rest.dropFirst()) + ["--help"])
        }
        if rest.first == "cache" {
            var tail = rest.dropFirst()
            cacheDir += takeCacheDir(from: &tail)
            if tail.first == "help" {   // `cache help [rm]` as `cache [rm] --help`
                return route(cacheDir + ["cache"] + Array(tail.dropFirst()) + ["--help"])
            }
            // A --cache-dir left without a value: `dir` parses it, and says so.
            if cacheDirOption(at: tail) != nil {
                return (CacheRoot.self, ["cache", "dir"] + Array(tail))
            }
            // No subcommand, or an unknown one: that is what to report (`cache`
            // alone shows its help), not that `cache` has no --cache-dir option.
            guard let name = tail.first, CacheCommand.isCommand(name) else {
                return (CacheRoot.self, ["cache"] + withoutCacheDir(tail))
            }
            return (CacheRoot.self, ["cache"] + Array(tail) + cacheDir)
        }
        return (AsyncFetch.self, arguments)
    }

    /// `--json cache list`, `-v help`: options before the command word, which
    /// were read as a fetch run of the URLs "cache" and "list" (two
    /// invalid-url failures, exit 1). The options move behind the command
    /// and its arguments (`cache list --json`), where its parser takes them
    /// or says it has no such option. Nil when the first argument that is
    /// not an option or an option's value is not `cache` or `help`.
    static func commandAfterOptions(_ arguments: ArraySlice<String>) -> [String]? {
        var index = arguments.startIndex
        while index < arguments.endIndex, arguments[index].hasPrefix("-"), arguments[index].count > 1, arguments[index] != "--" {
            // wget's `-O FILE` (`-qO cache URL`): a fetch run, told what to use (`ArgumentCheck`).
            guard !ArgumentCheck.endsWithO(arguments[index]) else { return nil }
            index += ArgumentCheck.takesNextArgument(arguments[index]) ? 2 : 1
        }
        guard index > arguments.startIndex, index < arguments.endIndex,
              arguments[index] == "cache" || arguments[index] == "help" else { return nil }
        return Array(arguments[index...]) + Array(arguments[..<index])
    }

    /// `help` knows two topics: the main command (`help`) and `help cache
    /// [SUBCOMMAND]`; anything else is a usage error, not the main help.
    static func checkHelpTopic(_ arguments: [String]) throws {
        var rest = arguments[...]
        _ = takeCacheDir(from: &rest)
        if let command = commandAfterOptions(rest) { rest = command[...] }   // `-v help TOPIC`
        guard rest.first == "help", let topic = rest.dropFirst().first, !topic.hasPrefix("-") else { return }
        if topic == "cache" {
            var tail = rest.dropFirst(2)
            _ = takeCacheDir(from: &tail)
            guard let name = tail.first, !name.hasPrefix("-"), !CacheCommand.isCommand(name) else { return }
            throw UsageError(namingHelp: "no help on 'cache \(name)': try 'asyncfetch help cache' for the cache commands")
        }
        throw UsageError(namingHelp: "no help on '\(topic)': try 'asyncfetch help' or 'asyncfetch help cache [SUBCOMMAND]'")
    }

    /// `cache bogus`: the word that is no cache command is the problem (the
    /// parser said "Unexpected argument 'bogus'"). `arguments` as routed:
    /// `cache` first.
    static func checkCacheCommand(_ arguments: [String]) throws {
        guard let name = arguments.dropFirst().first, !name.hasPrefix("-"), !CacheCommand.isCommand(name) else { return }
        let names = CacheCommand.names
        throw UsageError("'\(name)' is not a cache command: \(names.dropLast().joined(separator: ", ")) or \(names.last ?? "")")
    }

    /// The help a usage error points at: a cache command's own (`asyncfetch
    /// cache prune --help`: the main help lists none of its options), else
    /// the main one. `arguments` as routed (a cache command's start with
    /// `cache`), `given` as typed: a `dir` that `route` put in is no command given.
    static func helpCommand(root: ParsableCommand.Type, arguments: [String], given: [String]) -> String {
        guard root == CacheRoot.self else { return "asyncfetch --help" }
        guard let name = arguments.dropFirst().first, CacheCommand.isCommand(name), given.contains(name) else {
            return "asyncfetch cache --help"
        }
        return "asyncfetch cache \(name) --help"
    }

    /// `arguments` without any `--cache-dir DIR` / `--cache-dir=DIR` option.
    private static func withoutCacheDir(_ arguments: ArraySlice<String>) -> [String] {
        var kept: [String] = []
        var rest = arguments
        while let first = rest.first {
            if let option = cacheDirOption(at: rest) {
                rest = rest.dropFirst(option.count)
            } else {
                kept.append(first)
                rest = rest.dropFirst()
            }
        }
        return kept
    }

    /// A `--cache-dir DIR` (2 arguments) or `--cache-dir=DIR` (1) at the front
    /// of `arguments`, with its value (nil when `--cache-dir` is the last argument).
    private static func cacheDirOption(at arguments: ArraySlice<String>) -> (count: Int, value: String?)? {
        guard let first = arguments.first else { return nil }
        if first == "--cache-dir" { return (min(2, arguments.count), arguments.dropFirst().first) }
        if first.hasPrefix("--cache-dir=") { return (1, String(first.dropFirst("--cache-dir=".count))) }
        return nil
    }

    /// Removes the `--cache-dir DIR` / `--cache-dir=DIR` options at the
    /// front of `arguments` and returns them.
    /// One without a value, or with an empty one, is left where it is, for
    /// the parser to report.
    private static func takeCacheDir(from arguments: inout ArraySlice<String>) -> [String] {
        var taken: [String] = []
        while let option = cacheDirOption(at: arguments), let value = option.value, !value.isEmpty {
            taken += arguments.prefix(option.count)
            arguments = arguments.dropFirst(option.count)
        }
        return taken
    }

    /// Flushes what `print` buffered (the `cache` commands, help): output
    /// that could not be written turns a success into a failure.
    static func flushOutput(_ status: Int32) -> Int32 {
        guard let code = Console.flushOutput(), status == 0 else { return status }
        return exitStatus(for: OutputFailure.error(errno: code), root: AsyncFetch.self)
    }

    /// The exit status for `error`, its message written on stderr; a usage
    /// error points at `help`, the help of the command that was given.
    /// `arguments` as routed: an unknown option's suggestion is among that command's options.
    static func exitStatus(for error: Error, root: ParsableCommand.Type, arguments: [String] = [],
                           help: String = "asyncfetch --help") -> Int32 {
        switch error {
        case let code as ExitCode:
            return code.rawValue
        case let usage as UsageError:
            let message = UnreadableInputs.asTyped(usage.description, arguments: arguments)   // `cache path -i FILE`
            Console.error("asyncfetch: \(message)" + (usage.pointsAtHelp ? "\nSee '\(help)'." : ""))
            return 2
        case let inputs as UnreadableInputs:   // one line per list named by --input
            for input in inputs.errors { Console.error("asyncfetch: \(UnreadableInputs.asTyped(input.message, arguments: arguments))") }
            return 2
        case let failure as RuntimeFailure:
            Console.error("asyncfetch: \(failure.description)")
            return 1
        case let failure as ThreadStartError:
            Console.error("asyncfetch: \(failure.description)")
            return 1
        default:
            let code = root.exitCode(for: error)
            let message = root.fullMessage(for: error)
            if code == .success {
                print(message)
                return 0
            }
            if code == .validationFailure {
                let firstLine = message.split(separator: "\n").first.map(String.init) ?? message
                var reason = firstLine.hasPrefix("Error: ") ? String(firstLine.dropFirst(7)) : firstLine
                reason = OptionSuggestion.reworded(reason) { OptionSuggestion.options(root: root, arguments: arguments) }
                if let forms = ValueForms.hint(for: reason) { reason += ": " + forms }
                if let dashed = ValueForms.dashedValue(for: reason, arguments: arguments) { reason += "; " + dashed }
                Console.error("asyncfetch: \(reason)\nSee '\(help)'.")
                return 2
            }
            Console.error("asyncfetch: \(message)")
            return code.rawValue == 0 ? 1 : code.rawValue
        }
    }
}
