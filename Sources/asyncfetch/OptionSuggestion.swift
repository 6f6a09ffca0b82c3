import ArgumentParser
import Support

/// The "Did you mean" of an unknown option. swift-argument-parser offers
/// any option within 3 edits, whatever the length: `--bogus` got "Did you
/// mean '--jobs'?" and `--jbos` (a slip for `--jobs`) '--json'. Here the
/// suggestion is `NearestName`'s (Support) among the command's options.
enum OptionSuggestion {
    /// `reason` (the parser's first line) with its suggestion replaced by
    /// ours among `options`; any other reason unchanged.
    static func reworded(_ reason: String, options: () -> [String]) -> String {
        let prefix = "Unknown option '"
        guard reason.hasPrefix(prefix), let end = reason.dropFirst(prefix.count).firstIndex(of: "'") else { return reason }
        let typed = String(reason[reason.index(reason.startIndex, offsetBy: prefix.count)..<end])
        guard typed.hasPrefix("--") else { return reason }
        let unknown = "Unknown option '\(typed)'"
        guard let nearest = nearest(to: typed, among: options()) else { return unknown }
        return unknown + ". Did you mean '\(nearest)'?"
    }

    /// The option `typed` most likely meant, or nil when none is close (`NearestName`, on the names without `--`).
    static func nearest(to typed: String, among options: [String]) -> String? {
        let names = Set(options.filter { $0.hasPrefix("--") && $0 != typed }.map { String($0.dropFirst(2)) })
        return NearestName.nearest(to: String(typed.dropFirst(2)), among: names).map { "--" + $0 }
    }

    /// The long options of the command a usage error is about: a cache
    /// command's own (`arguments` as routed: `cache prune …`), else `root`'s.
    static func options(root: ParsableCommand.Type, arguments: [String]) -> [String] {
        guard root == CacheRoot.self else { return options(inHelp: root.helpMessage(columns: 1000)) }
        let name = arguments.dropFirst().first
        let command = CacheCommand.configuration.subcommands.first { $0._commandName == name } ?? CacheCommand.self
        return options(inHelp: CacheRoot.helpMessage(for: command, columns: 1000))
    }

    /// The long options a command's help lists (`--input` of `-i, --input <file>`, both of
    /// `--progress/--no-progress`): the names at the start of its option lines.
    static func options(inHelp help: String) -> [String] {
        help.split(separator: "\n").flatMap { line -> [String] in
            let text = line.drop { $0 == " " }
            guard text.hasPrefix("-") else { return [] }
            // The names end where the description starts, two spaces on (or at the line's end).
            let names = text.firstRange(of: "  ").map { text[..<$0.lowerBound] } ?? text
            return names.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "/" }).map(String.init).filter { $0.hasPrefix("--") }
        }
    }
}
