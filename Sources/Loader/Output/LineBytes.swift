import DiskCache
import Support

/// One result line's bytes, gathered in a small buffer on the stack and
/// added to the line's array in one piece (`ResultLine.human`).
///
/// Each `append` to an array checks that it is unique and has room: ~90
/// instructions for `append(contentsOf:)`, ~25 for one byte. A cache hit's
/// line was 11 of the one and about 15 of the other, a sixth of the hit's
/// own work; here a piece is a bounds check and a copy. A line longer than
/// the buffer goes to the array in as many pieces as it takes.
struct LineBytes: ByteSink {
    /// Bytes on the stack (`withUnsafeTemporaryAllocation` takes the heap
    /// above 1 KiB): a cache hit's line is about 130.
    static let capacity = 512

    private let buffer: UnsafeMutablePointer<UInt8>
    private var count = 0
    /// The array the bytes go to, valid while `build` runs.
    private let line: UnsafeMutablePointer<[UInt8]>

    private init(buffer: UnsafeMutablePointer<UInt8>, line: UnsafeMutablePointer<[UInt8]>) {
        self.buffer = buffer
        self.line = line
    }

    /// Calls `build` with a `LineBytes` whose bytes go after `line`'s;
    /// when `build` returns false, `line` is left as it was.
    static func build(into line: inout [UInt8], _ build: (inout LineBytes) -> Bool) -> Bool {
        let mark = line.count
        return withUnsafeMutablePointer(to: &line) { line in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
                var bytes = LineBytes(buffer: buffer.baseAddress!, line: line)
                guard build(&bytes) else {
                    if line.pointee.count > mark { line.pointee.removeSubrange(mark...) }
                    return false
                }
                bytes.spill()
                return true
            }
        }
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == Self.capacity { spill() }
        buffer[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if bytes.count > Self.capacity - count {
            spill()
            if bytes.count > Self.capacity {
                line.pointee.append(contentsOf: bytes)
                return
            }
        }
        (buffer + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// `text`'s UTF-8, borrowed (a native or small string is not copied).
    mutating func append(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ append(contentsOf: $0) }) != nil { return }
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }

    /// A stored body's path, as `appendShown` shows text: a control
    /// character in a directory the user named (`--cache-dir`, `-o`) is an
    /// escape too, and any other path reads as it is. A cache entry's
    /// `DIR/<key>` in three pieces, not built first (the key is hex digits,
    /// written from its digest).
    mutating func appendShown(_ stored: LoadResult.StoredBody) {
        appendShown(stored.directory)
        guard let key = stored.key else { return }
        if stored.hasSeparator { append(0x2F) }   // /
        key.withHex { digits, _ in append(contentsOf: digits) }
    }

    /// Text from a URL list or a server (URLs, messages, content types):
    /// `append`, with control characters written as escapes (`\x1B`,
    /// `\u{9B}`), so a line can never move the cursor, recolour or retitle
    /// the terminal it is printed on. JSON escapes them its own way.
    mutating func appendShown(_ text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ appendShown(utf8: $0) }) != nil { return }
        var text = text
        text.withUTF8 { appendShown(utf8: $0) }
    }

    /// Runs of plain bytes copied whole; C0 controls and DEL as `\xHH`, a
    /// C1 control (U+0080…U+009F, `C2 80`…`C2 9F`) as `\u{HH}`.
    private mutating func appendShown(utf8 text: UnsafeBufferPointer<UInt8>) {
        // The usual text (a URL) has none: one scan, one copy.
        guard ByteScan.contains(below: 0x20, or: 0x7F, 0xC2, 0xC2, in: text) else {
            append(contentsOf: text)
            return
        }
        var plain = 0
        var i = 0
        while i < text.count {
            let byte = text[i]
            if byte >= 0x20 && byte != 0x7F && byte != 0xC2 { i += 1; continue }
            let c1 = byte == 0xC2 && i + 1 < text.count && (0x80...0x9F).contains(text[i + 1])
            guard byte < 0x20 || byte == 0x7F || c1 else { i += 1; continue }
            append(contentsOf: UnsafeBufferPointer(rebasing: text[plain..<i]))
            if c1 {
                append(0x5C); append(0x75); append(0x7B)   // \u{
                appendHex(text[i + 1])
                append(0x7D)   // }
                i += 2
            } else {
                append(0x5C); append(0x78)   // \x
                appendHex(byte)
                i += 1
            }
            plain = i
        }
        append(contentsOf: UnsafeBufferPointer(rebasing: text[plain..<text.count]))
    }

    /// Two uppercase hex digits.
    private mutating func appendHex(_ byte: UInt8) {
        append(asciiHexDigit(byte >> 4, uppercase: true))
        append(asciiHexDigit(byte & 0xF, uppercase: true))
    }

    /// `count` spaces.
    mutating func appendSpaces(_ count: Int) {
        for _ in 0..<max(0, count) { append(0x20) }
    }

    /// What is gathered, to the array.
    private mutating func spill() {
        guard count > 0 else { return }
        line.pointee.append(contentsOf: UnsafeBufferPointer(start: buffer, count: count))
        count = 0
    }
}
