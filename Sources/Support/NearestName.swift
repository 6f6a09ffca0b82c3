/// Which of a set of names a mistyped one most likely meant: one slip away
/// (a letter wrong, missing, extra, or two neighbours swapped; two slips in
/// a word of 6 letters or more) and the only one that close; else the only
/// name that starts with what was typed (3 letters at least); else none.
/// The command line's "Did you mean" (swift-argument-parser offered any
/// name within 3 edits, whatever the length: `--bogus` got `--jobs`).
public enum NearestName {
    /// The name of `names` that `typed` (compared in lower case) most likely meant, or nil.
    public static func nearest(to typed: String, among names: Set<String>) -> String? {
        let word = Array(typed.lowercased())
        guard !word.isEmpty else { return nil }
        let allowed = word.count >= 6 ? 2 : 1
        let scored = names.map { ($0, distance(word, Array($0))) }.filter { $0.1 <= allowed }
        if let best = scored.map(\.1).min() {
            let closest = scored.filter { $0.1 == best }.map(\.0)
            return closest.count == 1 ? closest[0] : nil   // two as close: no guess
        }
        let starting = names.filter { word.count >= 3 && $0.hasPrefix(String(word)) }
        return starting.count == 1 ? starting.first : nil
    }

    /// Edits from `a` to `b`: letters replaced, inserted or deleted, and two
    /// neighbours swapped (optimal string alignment).
    public static func distance(_ a: [Character], _ b: [Character]) -> Int {
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
