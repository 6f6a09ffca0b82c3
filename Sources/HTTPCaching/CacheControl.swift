import Fetch
import Support

/// The `Cache-Control` directives a private cache acts on (RFC 9111 §5.2,
/// RFC 5861). `s-maxage` and `proxy-revalidate` concern shared caches and
/// are ignored, like every unknown directive; `private` only keeps a response
/// from the shared remote tier (`TierSharing`); `public` matters only as
/// permission for heuristic freshness (§4.2.2).
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
    /// `private` (§5.2.2.7): never to the shared remote tier (`--remote-cache`).
    public var isPrivate = false
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
        for value in values { add(value) }
    }

    /// The directives of every `Cache-Control` field of `headers`, in
    /// order, each value read in place: `init(headers.values("Cache-Control"))`
    /// without the array of values (every download's storability asks).
    public init(_ headers: HTTPHeaders) {
        let fields = headers.fields
        for index in fields.indices where asciiCaseInsensitiveEqual(fields[index].name, "Cache-Control") {
            add(fields[index].value)
        }
    }

    /// Adds the directives of one more field value (the first occurrence of each wins).
    public mutating func add(_ value: String) {
        withUTF8Bytes(of: value) { add(utf8: $0) }
    }

    /// `add`, from the value's UTF-8, in one pass: names are matched in
    /// place and numbers read digit by digit, so nothing is allocated (every
    /// hit on a response with `Cache-Control` parses it; the parse it
    /// replaced, a `String` per name and argument and an array of them, was
    /// ~11 k instructions a hit, and reads exactly the same). A directive
    /// ends at a comma outside quotes; its name is what precedes the first
    /// `=`, trimmed of spaces and tabs, in any case; its argument is the
    /// rest with quotes removed and `\` escapes resolved inside them, then
    /// trimmed.
    mutating func add(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        let end = bytes.count
        var i = 0
        while i <= end {
            let nameStart = i
            while i < end, bytes[i] != 0x2C, bytes[i] != 0x3D { i += 1 }   // , =
            let name = Name(bytes, from: nameStart, to: i)
            var argument: DeltaSeconds?
            if i < end, bytes[i] == 0x3D {
                i += 1
                var seconds = DeltaSeconds()
                let counts = name.takesSeconds
                var quoted = false
                while i < end {
                    var byte = bytes[i]
                    if quoted {
                        if byte == 0x5C {                                    // \ : the next byte as it is
                            i += 1
                            guard i < end else { break }
                            byte = bytes[i]
                        } else if byte == 0x22 {
                            quoted = false; i += 1; continue
                        }
                    } else if byte == 0x2C {
                        break
                    } else if byte == 0x22 {
                        quoted = true; i += 1; continue
                    }
                    if counts { seconds.add(byte) }
                    i += 1
                }
                argument = seconds
            }
            apply(name, argument)
            i += 1                                                           // past the comma
        }
    }

    /// The directive a name is, if it is one this cache acts on.
    private enum Name {
        case empty, other, maxAge, noStore, noCache, mustRevalidate, mustUnderstand, isPublic, isPrivate, staleWhileRevalidate, staleIfError

        /// `bytes[from..<to]` trimmed of spaces and tabs, matched in any
        /// ASCII case (`lowercased()` turns no other character into one of
        /// these names' letters); `.empty` when nothing is left.
        init(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, to: Int) {
            var start = from, end = to
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
            let name = UnsafeBufferPointer(rebasing: bytes[start..<end])
            switch name.count {
            case 0: self = .empty
            case 6 where Self.matches(name, "public"): self = .isPublic
            case 7 where Self.matches(name, "max-age"): self = .maxAge
            case 7 where Self.matches(name, "private"): self = .isPrivate
            case 8 where Self.matches(name, "no-store"): self = .noStore
            case 8 where Self.matches(name, "no-cache"): self = .noCache
            case 14 where Self.matches(name, "stale-if-error"): self = .staleIfError
            case 15 where Self.matches(name, "must-revalidate"): self = .mustRevalidate
            case 15 where Self.matches(name, "must-understand"): self = .mustUnderstand
            case 22 where Self.matches(name, "stale-while-revalidate"): self = .staleWhileRevalidate
            default: self = .other
            }
        }

        /// Whether `name` is `known` (lowercase, same length) with only `A`–`Z` folded.
        private static func matches(_ name: UnsafeBufferPointer<UInt8>, _ known: StaticString) -> Bool {
            let known = UnsafeBufferPointer(start: known.utf8Start, count: known.utf8CodeUnitCount)
            for i in 0..<name.count where name[i] != known[i] {
                guard name[i] >= 0x41, name[i] <= 0x5A, name[i] | 0x20 == known[i] else { return false }
            }
            return true
        }

        /// Whether the argument is read as delta-seconds.
        var takesSeconds: Bool { self == .maxAge || self == .staleWhileRevalidate || self == .staleIfError }
    }

    /// `deltaSeconds` of an argument fed byte by byte: digits between
    /// optional spaces and tabs, clamped to `Int.max`.
    private struct DeltaSeconds {
        var value = 0
        var digits = false, ended = false, invalid = false

        mutating func add(_ byte: UInt8) {
            if byte == 0x20 || byte == 0x09 {
                if digits { ended = true }
                return
            }
            guard byte >= 0x30, byte <= 0x39, !ended else { invalid = true; return }
            digits = true
            let (times10, over) = value.multipliedReportingOverflow(by: 10)
            let (sum, over2) = times10.addingReportingOverflow(Int(byte - 0x30))
            value = over || over2 ? Int.max : sum
        }

        var seconds: Int? { digits && !invalid ? value : nil }
    }

    /// One directive's effect: the first `max-age` decides (valid or not);
    /// an invalid `stale-*` window is as if absent.
    private mutating func apply(_ name: Name, _ argument: DeltaSeconds?) {
        switch name {
        case .empty, .other: return
        case .maxAge:
            guard maxAge == nil && !maxAgeInvalid else { return }
            if let seconds = argument?.seconds { maxAge = seconds } else { maxAgeInvalid = true }
        case .noStore: noStore = true
        case .noCache: noCache = true
        case .mustRevalidate: mustRevalidate = true
        case .mustUnderstand: mustUnderstand = true
        case .isPublic: isPublic = true
        case .isPrivate: isPrivate = true
        case .staleWhileRevalidate:
            if staleWhileRevalidate == nil { staleWhileRevalidate = argument?.seconds }
        case .staleIfError:
            if staleIfError == nil { staleIfError = argument?.seconds }
        }
    }

    /// `delta-seconds` (RFC 9111 §1.2.2): one or more ASCII digits.
    public static func deltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text) ?? Int.max
    }
}
