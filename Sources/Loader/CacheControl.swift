/// The `Cache-Control` directives a private cache acts on (RFC 9111 §5.2.2).
public struct CacheControl: Sendable, Equatable {
    /// `max-age`; the first occurrence wins. `maxAgeInvalid` when that first
    /// value is not a non-negative integer (then the response is stale, §4.2.1).
    public var maxAge: Int?
    public var maxAgeInvalid = false
    public var noStore = false
    public var noCache = false
    public var mustRevalidate = false

    public init() {}

    /// Parses every `Cache-Control` field value of a response (comma lists,
    /// quoted values, any case). Unknown directives are ignored.
    public init(_ values: [String]) {
        for value in values {
            for directive in Self.split(value) {
                let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = trimWhitespaceLower(parts[0])
                var argument = parts.count > 1 ? Substring(trimWhitespaceLower(parts[1])) : nil
                if let a = argument, a.count >= 2, a.hasPrefix("\""), a.hasSuffix("\"") { argument = a.dropFirst().dropLast() }
                switch name {
                case "max-age":
                    guard maxAge == nil && !maxAgeInvalid else { continue }
                    if let argument, !argument.isEmpty, argument.allSatisfy({ $0.isASCII && $0.isNumber }) {
                        maxAge = Int(argument) ?? Int.max   // overflow: "a very large number"
                    } else {
                        maxAgeInvalid = true
                    }
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "must-revalidate", "proxy-revalidate": mustRevalidate = mustRevalidate || name == "must-revalidate"
                default: continue
                }
            }
        }
    }

    /// Splits on commas outside quoted strings.
    private static func split(_ value: String) -> [Substring] {
        var out: [Substring] = []
        var start = value.startIndex
        var quoted = false
        var index = value.startIndex
        while index < value.endIndex {
            let c = value[index]
            if c == "\"" { quoted.toggle() } else if c == "," && !quoted {
                out.append(value[start..<index])
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        out.append(value[start...])
        return out.filter { !trimWhitespaceLower($0).isEmpty }
    }
}

func trimWhitespaceLower<S: StringProtocol>(_ s: S) -> String {
    var scalars = Substring(s).unicodeScalars[...]
    while let f = scalars.first, f == " " || f == "\t" { scalars = scalars.dropFirst() }
    while let l = scalars.last, l == " " || l == "\t" { scalars = scalars.dropLast() }
    return String(String.UnicodeScalarView(scalars)).lowercased()
}
