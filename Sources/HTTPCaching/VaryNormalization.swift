import Support

/// Normalising the value of a request header that a `Vary` names, in the
/// ways RFC 9111 §4.1 allows ("in a way that is known to have identical
/// semantics"): several lines are one comma-separated list (RFC 9110 §5.3),
/// whitespace around list members and parameters is insignificant (OWS),
/// and for the `Accept-*` headers case and member order are too (language
/// tags, codings and charsets are case-insensitive; preference comes from
/// the q-values, and `q=1` is the default).
public enum VaryNormalization {
    /// Headers whose members are case-insensitive tokens and whose order does not matter.
    public static let unorderedCaseInsensitive: Set<String> = ["accept-language", "accept-encoding", "accept-charset"]

    public static func normalize(_ value: String, name: String) -> String {
        var members = listMembers(value).map(normalizeParameters)
        if unorderedCaseInsensitive.contains(name.lowercased()) {
            members = members.map { $0.lowercased() }.sorted()
        }
        return members.joined(separator: ", ")
    }

    /// Whether the most preferred language range of an `Accept-Language`
    /// value (highest q, first on a tie; RFC 9110 §12.5.4) matches
    /// `language` (the tag, or a prefix of it ending at a "-").
    public static func firstChoice(ofAcceptLanguage value: String, is language: String) -> Bool {
        var best: (range: String, q: Double)?
        for member in listMembers(value) {
            let parts = member.split(separator: ";").map { trimWhitespaceLower($0) }
            guard let range = parts.first, !range.isEmpty else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if q > 0, q > best?.q ?? 0 { best = (range, q) }
        }
        guard let range = best?.range else { return false }
        let tag = trimWhitespaceLower(language)
        return range == tag || tag.hasPrefix(range + "-")
    }

    /// The comma-separated members of a list, trimmed, empty ones dropped;
    /// commas inside quoted strings do not split.
    public static func listMembers(_ value: String) -> [String] {
        var members: [String] = []
        var current: [UInt8] = []
        var quoted = false, escaped = false
        func flush() {
            let member = trimWhitespace(String(decoding: current, as: UTF8.self))
            if !member.isEmpty { members.append(member) }
            current.removeAll(keepingCapacity: true)
        }
        for byte in value.utf8 {
            if quoted {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { quoted = false }
            } else if byte == 0x22 {
                quoted = true
            } else if byte == 0x2C {
                flush()
                continue
            }
            current.append(byte)
        }
        flush()
        return members
    }

    /// "de ; q=1.0" → "de": no whitespace around ";", and the default weight dropped.
    private static func normalizeParameters(_ member: String) -> String {
        guard member.contains(";"), !member.contains("\"") else { return member }
        var parts = member.split(separator: ";", omittingEmptySubsequences: false).map { trimWhitespace($0) }
        parts = parts.enumerated().compactMap { index, part in
            guard index > 0, part.lowercased().hasPrefix("q="), let q = Double(part.dropFirst(2)) else { return part }
            return q == 1 ? nil : "q=" + String(q)
        }
        return parts.joined(separator: ";")
    }
}
