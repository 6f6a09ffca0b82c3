/// Why a request header cannot be sent as given. The rule is checked before
/// any I/O, for `FetchConfiguration` (its `validate()`, and every request of
/// a client made with it), every `FetchRequest`, and the tool's `-H` and
/// `--user-agent` (a usage error there): one rule, `HTTPHeaders.problem`.
public enum HeaderProblem: Sendable, Equatable, CustomStringConvertible {
    /// A CR, LF or NUL in the name or value. libcurl sends a header line as
    /// it is given: a line break would end this header and start another
    /// (header injection), and a NUL would cut it short.
    case lineBreak
    /// No name.
    case emptyName
    /// A name that is not an RFC 9110 token (letters, digits and
    /// ``!#$%&'*+-.^_`|~``): a space or `:` in it would send another name.
    case invalidName

    public var description: String {
        switch self {
        case .lineBreak: "a line break (CR or LF) or NUL would end the header and start another"
        case .emptyName: "the name is empty"
        case .invalidName: "a name is letters, digits and !#$%&'*+-.^_`|~ only"
        }
    }
}

extension HTTPHeaders {
    /// Why the header `name: value` cannot be sent, or nil when it can
    /// (RFC 9110 §5.1, §5.5: a name is a token; a value holds no CR, LF
    /// or NUL). Any value without those may be sent, the empty one too.
    public static func problem(name: String, value: String) -> HeaderProblem? {
        // The bytes read in place (`withUTF8`: a native string's own), not through the UTF-8 view
        // byte by byte: every request is checked, a revalidation's validator twice (~60 instructions
        // a byte, 5.7 k per revalidation, before).
        var name = name, value = value
        if name.withUTF8(hasLineBreak) || value.withUTF8(hasLineBreak) { return .lineBreak }
        if name.isEmpty { return .emptyName }
        if !name.withUTF8({ $0.allSatisfy(isTokenByte) }) { return .invalidName }
        return nil
    }

    /// The first field that cannot be sent, and why (none when they were checked as they were made:
    /// `init(sendable:)`).
    public func firstProblem() -> (name: String, problem: HeaderProblem)? {
        if checked { return nil }
        for field in fields {
            if let problem = Self.problem(name: field.name, value: field.value) { return (field.name, problem) }
        }
        return nil
    }

    private static func hasLineBreak(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E:
            return true   // ! # $ % & ' * + - . ^ _ ` | ~
        default:
            return false
        }
    }
}
