import Support

/// The `Cache-Control` directives a private cache acts on (RFC 9111 §5.2,
/// RFC 5861). `s-maxage`, `proxy-revalidate` and `private` concern shared
/// caches and are ignored, like every unknown directive; `public` matters
/// only as permission for heuristic freshness (§4.2.2).
public struct CacheControl: Sendable, Equatable {
    /// `max-age` in seconds. The first occurrence wins; a value too large
    /// for `Int` is clamped (RFC 9111 §1.2.2: "a very large number").
    public var maxAge: Int?
    /// The first `max-age` was not a non-negative integer: the response is
    /// stale (§4.2.1 says such a value should be treated as stale).
    public var maxAgeInvalid = false
    /// Never store the response (§5.2.2.5).
    public var noStore = false
    /// Store, but revalidate before every use (§5.2.2.4; the qualified form
    /// `no-cache="Field"` is treated as unqualified, which is the safe reading).
    public var noCache = false
    /// Never serve the response stale, not even when the network fails (§5.2.2.2).
    public var mustRevalidate = false
    /// Store only if the status code is understood, and then ignore `no-store` (§5.2.2.3).
    public var mustUnderstand = false
    /// `public` (§5.2.2.9): among other things, allows heuristic freshness for any status.
    public var isPublic = false
    /// RFC 5861 §3: seconds after becoming stale during which the stored
    /// copy may be used while it is revalidated in the background.
    public var staleWhileRevalidate: Int?
    /// RFC 5861 §4: seconds after becoming stale during which the stored
    /// copy may be used when the server fails (a limit on `--stale-if-error`).
    public var staleIfError: Int?

    public init() {}

    /// Parses every `Cache-Control` field value of a response: comma lists,
    /// quoted arguments (with `\` escapes), any case, optional whitespace.
    /// Never fails: what cannot be understood is ignored, except a malformed
    /// first `max-age`, which makes the response stale.
    public init(_ values: [String]) {
        for value in values {
            for directive in Self.directives(in: value) {
                switch directive.name {
                case "max-age":
                    guard maxAge == nil && !maxAgeInvalid else { continue }
                    if let seconds = directive.argument.flatMap(Self.deltaSeconds) {
                        maxAge = seconds
                    } else {
                        maxAgeInvalid = true
                    }
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "must-revalidate": mustRevalidate = true
                case "must-understand": mustUnderstand = true
                case "public": isPublic = true
                case "stale-while-revalidate":
                    if staleWhileRevalidate == nil { staleWhileRevalidate = directive.argument.flatMap(Self.deltaSeconds) }
                case "stale-if-error":
                    if staleIfError == nil { staleIfError = directive.argument.flatMap(Self.deltaSeconds) }
                default: continue
                }
            }
        }
    }

    /// The directives of one field value: lowercased names, arguments with
    /// any quoting removed. Commas inside quoted strings do not split.
    public static func directives(in value: String) -> [(name: String, argument: String?)] {
        var out: [(name: String, argument: String?)] = []
        var name: [UInt8] = [], argument: [UInt8] = []
        var inArgument = false, quoted = false, escaped = false, hadArgument = false
        func flush() {
            let trimmedName = trimWhitespaceLower(String(decoding: name, as: UTF8.self))
            if !trimmedName.isEmpty {
                let arg = hadArgument ? trimWhitespace(String(decoding: argument, as: UTF8.self)) : nil
                out.append((trimmedName, arg))
            }
            name.removeAll(keepingCapacity: true)
            argument.removeAll(keepingCapacity: true)
            inArgument = false
            hadArgument = false
        }
        for byte in value.utf8 {
            if quoted {
                if escaped { argument.append(byte); escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { quoted = false } else { argument.append(byte) }
                continue
            }
            switch byte {
            case 0x2C: flush()                                        // ,
            case 0x3D where !inArgument: inArgument = true; hadArgument = true   // =
            case 0x22 where inArgument: quoted = true                 // "
            default: if inArgument { argument.append(byte) } else { name.append(byte) }
            }
        }
        flush()
        return out
    }

    /// `delta-seconds` (RFC 9111 §1.2.2): one or more ASCII digits.
    public static func deltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text) ?? Int.max
    }
}
