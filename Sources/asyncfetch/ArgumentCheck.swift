#if canImport(Glibc)
import Glibc
#endif
import enum Loader.HabitHints

/// Checks a command line before either parser reads it: habitual curl/wget
/// options get their one-line answer (`HabitHints`), and an option given
/// twice is a usage error naming it, unless it accumulates (`-i`, `-H`).
///
/// Why here: swift-argument-parser keeps the last of a repeated option
/// silently (`-i a.txt -i b.txt` read only `b.txt` and exited 0).
enum ArgumentCheck {
    /// Options that take a value (their next argument is never an option name).
    static let valueOptions: Set<String> = [
        "--input", "--output", "--cache-dir", "--jobs", "--max-size", "--connect-timeout", "--timeout",
        "--retries", "--default-ttl", "--max-age", "--header", "--cacert", "--output-dir", "--name",
        "--user-agent", "--jobs-per-host", "--remote-cache", "--shard",
    ]
    /// Flags whose repetition is reported too (`--no-progress` counts as `--progress`).
    static let flags: Set<String> = [
        "--offline", "--json", "--quiet", "--verbose", "--progress", "--refresh", "--stale-if-error", "--any",
        "--insecure", "--link", "-O", "--sync", "--no-heuristic", "--decode",
    ]
    /// Options that make sense more than once: their values accumulate.
    static let accumulating: Set<String> = ["--input", "--header"]

    static let shortNames: [Character: String] = [
        "i": "--input", "o": "--output", "H": "--header", "P": "--output-dir",
        "q": "--quiet", "v": "--verbose", "O": "-O",
    ]

    static func check(_ arguments: [String]) throws {
        let forCache = arguments.first == "cache"   // as routed: a cache command's arguments start with `cache`
        var seen: [String: String] = [:]   // canonical name -> as typed first
        func count(_ canonical: String, typed: String) throws {
            guard !accumulating.contains(canonical) else { return }
            let slot = canonical == "-O" ? "--output-dir" : canonical   // -O is -P .: one folder either way
            if let first = seen[slot] {
                if first != typed && (first == "-O" || typed == "-O") {
                    throw UsageError("-O and --output-dir DIR exclude each other (-O is the same as -P .)")
                }
                let names = first == typed ? "\(typed) is" : "\(first) and \(typed) are"
                throw UsageError("\(names) given twice; give \(canonical) once (only -i and -H can be repeated)")
            }
            seen[slot] = typed
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { break }
            guard argument.hasPrefix("-"), argument.count > 1 else { continue }
            if argument.hasPrefix("--") {
                let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
                if let hint = HabitHints.answer(for: name) { throw UsageError(hint: hint) }
                let canonical = name == "--no-progress" ? "--progress" : name
                if valueOptions.contains(canonical) || flags.contains(canonical) { try count(canonical, typed: name) }
                if canonical == "--input" {
                    let value = argument.contains("=") ? String(argument.drop { $0 != "=" }.dropFirst())
                                                       : index < arguments.count ? arguments[index] : ""
                    try checkInputValue(typed: argument.contains("=") ? argument : "\(argument) \(value)", value: value, forCache: forCache)
                }
                if valueOptions.contains(canonical) && !argument.contains("=") { index += 1 }
                continue
            }
            // wget's `-O FILE` (`-qO FILE`) is asyncfetch's -o FILE; asyncfetch's -O (curl's) takes no value.
            if endsWithO(argument), index < arguments.count {
                let value = arguments[index]
                if value == "-" || (!value.hasPrefix("-") && !value.contains("://")) {
                    throw UsageError(hint: Self.wgetOutput("\(argument) \(value)", value: value))
                }
            }
            // Whole short words first (wget's -nc, -nv), then -x, -xVALUE and -qv.
            if let hint = HabitHints.answer(for: argument) { throw UsageError(hint: hint) }
            for (offset, letter) in argument.dropFirst().enumerated() {
                let typed = "-\(letter)"
                // wget's value joined to -O (`-O-`, `-qO-`, `-Ocat.png`); `-Ov` is two flags.
                if letter == "O" {
                    let rest = argument.dropFirst(offset + 2)
                    if !rest.isEmpty && !rest.allSatisfy({ shortNames[$0] != nil }) {
                        throw UsageError(hint: Self.wgetOutput(argument, value: String(rest)))
                    }
                }
                guard let canonical = shortNames[letter] else {
                    if let hint = HabitHints.answer(for: typed) { throw UsageError(hint: hint) }
                    break   // unknown or a number (`--jobs -1` was skipped as a value): the parser decides
                }
                try count(canonical, typed: typed)
                if valueOptions.contains(canonical) {
                    if canonical == "--input", offset == argument.count - 2, index < arguments.count {
                        try checkInputValue(typed: "\(argument) \(arguments[index])", value: arguments[index], forCache: forCache)
                    }
                    if offset == argument.count - 2 { index += 1 }   // the value is the next argument
                    break
                }
            }
        }
    }
}

extension ArgumentCheck {
    /// Whether `argument` is -O, alone or after flags (`-qO`): wget's `-O FILE`
    /// when a file name follows it (`wget -qO out.png URL`).
    static func endsWithO(_ argument: String) -> Bool {
        guard argument.count > 1, argument.hasPrefix("-"), !argument.hasPrefix("--"), argument.last == "O" else { return false }
        return argument.dropFirst().dropLast().allSatisfy { letter in
            shortNames[letter].map { !valueOptions.contains($0) } ?? false
        }
    }

    /// Whether `argument`, an option as typed, takes the argument after it
    /// as its value (`--jobs 8`, `-i FILE`, `-qo FILE`; not `--jobs=8`, `-ofile`).
    static func takesNextArgument(_ argument: String) -> Bool {
        if argument.hasPrefix("--") { return valueOptions.contains(argument) }
        for (offset, letter) in argument.dropFirst().enumerated() {
            guard let canonical = shortNames[letter] else { return false }
            if valueOptions.contains(canonical) { return offset == argument.count - 2 }
        }
        return false
    }

    /// curl's `-i URL` (`--include`), or a URL given to `-i` by mistake: it
    /// was "cannot read -i https://…: No such file or directory". A file of
    /// that name (which would need a folder named `https:`) is read as asked.
    /// A cache command (`forCache`: `cache path -i URL`) is not told of curl's
    /// `--include`, whose answer (`-v`, `--json`) is a fetch run's.
    static func checkInputValue(typed: String, value: String, forCache: Bool = false) throws {
        guard value.contains("://"), access(value, F_OK) != 0 else { return }
        let answer = "\(typed): -i reads a list of URLs from a file; name a URL as an argument itself"
        throw UsageError(hint: answer + (forCache ? "" : " (curl's -i, --include: use -v or --json; the response headers themselves are not printed)"))
    }

    /// The answer to wget's `-O FILE` (`-O -`: the body on stdout), as `typed`.
    static func wgetOutput(_ typed: String, value: String) -> String {
        "\(typed): -O takes no file name (like curl's -O it saves under the URL's own name, in the current folder); "
            + (value == "-" ? "wget's -O - is -o - (only the body on stdout)" : "wget's -O FILE is -o FILE")
    }
}

extension UsageError {
    /// A habitual option's answer: one line, no pointer to --help.
    init(hint: String) { self.init(environment: hint) }
}
