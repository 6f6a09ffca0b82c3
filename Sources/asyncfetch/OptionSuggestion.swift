import ArgumentParser

/// The "Did you mean" of an unknown option. swift-argument-parser offers
/// any option within 3 edits, whatever the length: `--bogus` got "Did you
/// mean '--jobs'?" and `--jbos` (a slip for `--jobs`) '--json'. Here a
/// suggestion is an option one slip away (a letter wrong, missing, extra,
/// or two swapped; two slips in a name of 6 letters or more), or the only
/// option that starts with what was typed (`--verb`); else none.
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

    /// The option `typed` most likely meant, or nil when none is close.
    static func nearest(to typed: String, among options: [String]) -> String? {
        let word = Array(typed.dropFirst(2).lowercased())
        guard !word.isEmpty else { return nil }
        let candidates = Set(options.filter { $0.hasPrefix("--") && $0 != typed })
        let allowed = word.count >= 6 ? 2 : 1
        let scored = candidates.map { ($0, distance(word, Array($0.dropFirst(2)))) }.filter { $0.1 <= allowed }
        if let best = scored.map(\.1).min() {
            let closest = scored.filter { $0.1 == best }.map(\.0)
            return closest.count == 1 ? closest[0] : nil   // two as close: no guess
        }
        let starting = candidates.filter { word.count >= 3 && $0.dropFirst(2).hasPrefix(String(word)) }
        return starting.count == 1 ? starting.first : nil
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

    /// Edits from `a` to `b`: letters replaced, inserted or deleted, and two
    /// neighbours swapped (optimal string alignment).
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
