/// Checks the response header lines libcurl hands to the header callback,
/// one line at a time, because libcurl 7.88 accepts what RFC 9110 forbids:
/// a response cut inside its headers counts as complete, and an invalid
/// `Content-Length` ("5abc", "1e3", "5, 74") is read as its numeric prefix.
///
/// A plain value with no I/O (fuzzed by `Fuzz/`): the transfer feeds it
/// every line and aborts the transfer when it reports a problem.
struct ResponseHeadCheck {
    enum Line: Equatable {
        /// A status line: a new response starts (a redirect or 1xx went before).
        case status
        /// A header field, or the blank line that ends the block.
        case field
        /// A trailer field after a final response's body: not a header.
        case trailer
        /// The response is malformed; `problem` says how. Abort the transfer.
        case malformed
    }

    private enum State { case expectingStatus, inHeaders, afterHeaders }

    /// A line's bytes (the callback's buffer, read in place: no copy per line).
    typealias Bytes = Slice<UnsafeRawBufferPointer>

    private var state = State.expectingStatus
    /// The current response's status code.
    private(set) var status = 0
    /// What was wrong, once a line was malformed.
    private(set) var problem: String?
    /// The current response's `Content-Length`, once a field gave it.
    private(set) var contentLength: Int64?
    /// The current response's `Content-Encoding` fields, joined with ", " (nil: none),
    /// noted here so the body's decoder needs no second parse of the header block.
    private(set) var contentEncoding: String?

    /// Whether the last response's header block ended with its blank line.
    var isComplete: Bool { state == .afterHeaders && problem == nil }

    /// Classifies one line (with its CRLF) and checks it.
    mutating func accept(_ line: UnsafeRawBufferPointer) -> Line {
        if problem != nil { return .malformed }
        // Most lines are a field of the header block: told apart by their
        // first bytes, read in place (no slice per line; issue 22).
        if state == .inHeaders, let base = line.baseAddress {
            var count = line.count
            while count > 0 && (base.load(fromByteOffset: count - 1, as: UInt8.self) == 0x0A
                                || base.load(fromByteOffset: count - 1, as: UInt8.self) == 0x0D) { count -= 1 }
            if count == 0 {
                state = .afterHeaders
                return .field
            }
            return field(UnsafeRawBufferPointer(start: base, count: count))
        }
        let text = Self.trimmingLineEnd(line)
        switch state {
        case .afterHeaders where status >= 200 && !Self.startsWithHTTP(text):
            return .trailer
        case .expectingStatus, .afterHeaders:
            guard let code = Self.statusCode(text) else {
                return fail("invalid status line \"\(Self.quoted(text))\"")
            }
            status = code
            contentLength = nil
            contentEncoding = nil
            state = .inHeaders
            return .status
        case .inHeaders:
            if text.isEmpty {
                state = .afterHeaders
                return .field
            }
            return field(UnsafeRawBufferPointer(rebasing: text))
        }
    }

    /// One header field (`text`: not empty, its line end trimmed). Only two
    /// fields are read here, both "Content-…": any other line is told by its
    /// first byte, or by the byte where such a name's colon would be (the
    /// name's first colon is there exactly when the name before it is one of the two).
    private mutating func field(_ text: UnsafeRawBufferPointer) -> Line {
        guard text[0] | 0x20 == 0x63 else { return .field }
        if text.count > 14 && text[14] == 0x3A && Self.startsWith(text, "content-length") {
            if let failure = checkContentLength(text[15...]) { return fail(failure) }
        } else if text.count > 16 && text[16] == 0x3A && Self.startsWith(text, "content-encoding") {
            let coding = String(decoding: Self.trimmingSpaces(text[17...]), as: UTF8.self)
            contentEncoding = contentEncoding.map { $0 + ", " + coding } ?? coding
        }
        return .field
    }

    private mutating func fail(_ text: String) -> Line {
        problem = text
        return .malformed
    }

    /// RFC 9110 §8.6: 1*DIGIT; a list of identical values may be read as one.
    /// Every other form is an unrecoverable error, and so are two fields that differ.
    private mutating func checkContentLength(_ value: Bytes) -> String? {
        // The usual value, one number of at most 18 digits between spaces, read in one pass.
        var at = value.startIndex
        while at < value.endIndex && (value[at] == 0x20 || value[at] == 0x09) { at += 1 }
        var number: Int64 = 0
        var digitCount = 0
        while at < value.endIndex && value[at] >= 0x30 && value[at] <= 0x39 && digitCount < 18 {
            number = number * 10 + Int64(value[at] - 0x30)
            digitCount += 1
            at += 1
        }
        while at < value.endIndex && (value[at] == 0x20 || value[at] == 0x09) { at += 1 }
        if at == value.endIndex && digitCount > 0 {
            if let previous = contentLength, previous != number { return "two different Content-Length values" }
            contentLength = number
            return nil
        }
        // The message is built only when it is needed (not for every valid field).
        func invalid() -> String { "invalid Content-Length \"\(Self.quoted(Self.trimmingSpaces(value)))\"" }
        var first: Bytes?
        // The comma-separated members, walked in place (no array of them per field).
        var memberStart = value.startIndex
        while true {
            let memberEnd = value[memberStart...].firstIndex(of: 0x2C) ?? value.endIndex
            let digits = Self.trimmingSpaces(value[memberStart..<memberEnd])
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return invalid() }
            if let first, !first.elementsEqual(digits) { return invalid() }
            first = digits
            guard memberEnd < value.endIndex else { break }
            memberStart = memberEnd + 1
        }
        guard let digits = first else { return invalid() }
        let significant = digits.drop { $0 == 0x30 }
        if significant.count > 18 { return "Content-Length \"\(Self.quoted(Self.trimmingSpaces(value)))\" is out of range" }
        // At most 18 digits: the number says what the digits say, without a copy of them.
        let length = significant.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
        if let previous = contentLength, previous != length {
            return "two different Content-Length values"
        }
        contentLength = length
        return nil
    }

    /// `HTTP/1.0`, `HTTP/1.1`, `HTTP/2` or `HTTP/3`, a space, three digits
    /// (100–599), then nothing or a space and a reason phrase.
    static func statusCode(_ text: Bytes) -> Int? {
        guard startsWithHTTP(text) else { return nil }
        var rest = text.dropFirst(5)
        // "1.1 ", "1.0 ", "2 " or "3 " (compared byte by byte: no strings built per line).
        switch (rest.first, rest.dropFirst().first, rest.dropFirst(2).first, rest.dropFirst(3).first) {
        case (0x31, 0x2E, 0x31, 0x20), (0x31, 0x2E, 0x30, 0x20): rest = rest.dropFirst(4)
        case (0x32, 0x20, _, _), (0x33, 0x20, _, _): rest = rest.dropFirst(2)
        default: return nil
        }
        let digits = rest.prefix(3)
        guard digits.count == 3, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        if let after = rest.dropFirst(3).first, after != 0x20 { return nil }
        let code = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return (100...599).contains(code) ? code : nil
    }

    /// Whether `text` starts with "HTTP/".
    private static func startsWithHTTP(_ text: Bytes) -> Bool {
        guard text.count >= 5 else { return false }
        let at = text.startIndex
        return text[at] == 0x48 && text[at + 1] == 0x54 && text[at + 2] == 0x54 && text[at + 3] == 0x50 && text[at + 4] == 0x2F
    }

    /// Whether `text` starts with `lowercase` (ASCII letters and "-", at
    /// least 8 of them; `text` at least as long) in any case: each byte with
    /// 0x20 set is the expected one, compared 8 bytes at a time.
    private static func startsWith(_ text: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        let count = lowercase.utf8CodeUnitCount
        let expected = UnsafeRawPointer(lowercase.utf8Start)
        var offset = 0
        while offset < count {
            let at = min(offset, count - 8)   // the last word overlaps the one before it
            let word = text.loadUnaligned(fromByteOffset: at, as: UInt64.self) | 0x2020_2020_2020_2020
            guard word == expected.loadUnaligned(fromByteOffset: at, as: UInt64.self) else { return false }
            offset += 8
        }
        return true
    }

    private static func trimmingLineEnd(_ line: UnsafeRawBufferPointer) -> Bytes {
        var text = line[...]
        while let last = text.last, last == 0x0A || last == 0x0D { text.removeLast() }
        return text
    }

    private static func trimmingSpaces(_ text: Bytes) -> Bytes {
        var text = text
        while let first = text.first, first == 0x20 || first == 0x09 { text.removeFirst() }
        while let last = text.last, last == 0x20 || last == 0x09 { text.removeLast() }
        return text
    }

    /// At most 60 bytes of `text`, printable ASCII kept, anything else as `?`.
    private static func quoted(_ text: Bytes) -> String {
        let shown = text.prefix(60).map { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 ? Character(UnicodeScalar($0)) : "?" }
        return String(shown) + (text.count > 60 ? "…" : "")
    }
}
