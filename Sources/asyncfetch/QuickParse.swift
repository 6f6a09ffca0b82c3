import struct Loader.RunSettings

/// A fast reader for the common, short command lines (`asyncfetch URL`,
/// `asyncfetch --offline --json --cache-dir D URL...`, `--input FILE`,
/// `--jobs N`, `--jobs-per-host N`).
///
/// Why: swift-argument-parser reflects over every option at start-up; for a
/// one-URL cache hit that was about a quarter of the whole process (perf),
/// and with `--jobs 8 --jobs-per-host 8` it was 20 M instructions (callgrind:
/// 8.0 M for the whole one-URL run without them, 27.7 M with them), before
/// any URL is looked at.
/// This reader accepts only plain flags and the few options listed below,
/// each at most once, and counts only as plain decimal digits; anything else
/// (another value option such as `--max-size`, a signed or non-decimal
/// count, a combined short flag, `--help`, `--`, a repeat) returns nil and
/// the full parser takes over, so every error message and every other option
/// stays swift-argument-parser's. An end-to-end test runs the same command
/// lines through both parsers and compares the results.
enum QuickParse {
    static func parse(_ arguments: [String]) -> RunSettings? {
        var settings = RunSettings()
        var seen = Set<String>()
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-") else {
                settings.urls.append(argument)
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
                // swift-argument-parser reads `--x=` as no value (the next argument becomes it).
                if inlineValue?.isEmpty == true { return nil }
            }
            let canonical: String
            switch name {
            case "-q": canonical = "--quiet"
            case "-v": canonical = "--verbose"
            case "-i": canonical = "--input"
            case "-o": canonical = "--output"
            case "--no-progress": canonical = "--progress"
            default: canonical = name
            }
            guard seen.insert(canonical).inserted else { return nil }   // a repeat: the full parser decides
            if inlineValue == nil {
                switch canonical {
                case "--offline": settings.offline = true; continue
                case "--json": settings.json = true; continue
                case "--quiet": settings.quiet = true; continue
                case "--verbose": settings.verbose = true; continue
                case "--refresh": settings.refresh = true; continue
                case "--stale-if-error": settings.staleIfError = true; continue
                case "--sync": settings.sync = true; continue
                case "--no-heuristic": settings.heuristic = false; continue
                case "--any": settings.any = true; continue
                case "--insecure": settings.insecure = true; continue
                case "--progress": settings.progress = name == "--progress"; continue
                default: break
                }
            }
            guard ["--cache-dir", "--input", "--output", "--jobs", "--jobs-per-host"].contains(canonical) else { return nil }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                // A value that looks like an option is left to the full parser's judgement.
                guard index < arguments.count, !arguments[index].hasPrefix("-") || arguments[index] == "-" else { return nil }
                value = arguments[index]
                index += 1
            }
            switch canonical {
            case "--cache-dir": settings.cacheDir = value
            case "--input": settings.input = [value]
            case "--jobs":
                guard let count = Self.count(value) else { return nil }
                settings.jobs = count
            case "--jobs-per-host":
                guard let count = Self.count(value) else { return nil }
                settings.jobsPerHost = count
            default: settings.output = value
            }
        }
        // Nothing to fetch is a usage error: let the full parser word it.
        return settings.urls.isEmpty && settings.input.isEmpty ? nil : settings
    }

    /// 1 to 9 ASCII digits, as `Int` reads them (what swift-argument-parser
    /// does with such a value); nil for anything else, which the full parser
    /// then words or accepts (`+8`, `-1`, `1e3`, an overflow).
    private static func count(_ value: String) -> Int? {
        guard (1...9).contains(value.utf8.count), value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(value)
    }
}
