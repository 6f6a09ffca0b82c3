#if canImport(Glibc)
import Glibc
#endif
import Support

/// A decoded record's stored response headers, read in place: one copy of
/// the record's header lines (`h Name value`…), then a table that says
/// where each header's name and value are and which of the names a hit
/// reads it is (`CacheMetadata.HeaderKind`, recognised once, here).
///
/// A hit reads its `Date`, `Last-Modified` and `Content-Type` and looks for
/// `Vary` and `Cache-Control`: before, the decoder made a `[Header]` (an
/// array, a name and a value storage each, released with the entry) and
/// every question compared names again. Now a hit makes one allocation for
/// its headers, and `CacheMetadata.headers` builds the array only for a
/// caller that asks for it (a 304's merge, `cache verify`, the remote tier).
@usableFromInline
struct RecordHeaders: Sendable {
    /// The header lines' bytes, then (at `table`, 4-aligned) `entryWords`
    /// `UInt32`s per header: name start, name end, value start, value end
    /// (offsets in these bytes), kind.
    @usableFromInline let bytes: [UInt8]
    @usableFromInline let table: Int
    @usableFromInline let count: Int

    @usableFromInline static var entryWords: Int { 5 }

    /// The table of up to `Table.capacity` headers, filled by the decoder
    /// as it reads their lines, in stack memory the caller provides (each
    /// line split once there: a second pass over the lines, here, cost a
    /// `memchr` and a name split a header again).
    struct Table {
        static var capacity: Int { 12 }
        static var byteCount: Int { 4 * RecordHeaders.entryWords * capacity }
        /// `capacity` entries of `entryWords` `UInt32`s.
        let base: UnsafeMutableRawPointer

        /// Entry `index` (below `capacity`): the header `header` ("Name value",
        /// or "Name" alone with an empty value) whose first byte is at `start`
        /// of the copied lines.
        @inline(__always)
        func note(_ index: Int, _ header: ByteRun, at start: Int) {
            RecordHeaders.storeHeader(base + 4 * RecordHeaders.entryWords * index, header, at: start)
        }
    }

    /// The `count` header lines among `lines` (a record's bytes from its
    /// first header line to the end of its last), copied with the table the
    /// decoder made of them (`count` at most `Table.capacity`).
    init(lines: UnsafeRawBufferPointer, table entries: Table, count: Int) {
        let table = (lines.count + 3) & ~3
        let size = table + 4 * Self.entryWords * count
        // As below: on the stack, then one copy into the array.
        bytes = withUnsafeTemporaryAllocation(byteCount: size, alignment: 4) { out in
            if let base = out.baseAddress, Self.copyLines(lines, to: base, table: table) {
                (base + table).copyMemory(from: entries.base, byteCount: size - table)
            }
            return [UInt8](UnsafeRawBufferPointer(out))
        }
        self.table = table
        self.count = count
    }

    /// The `count` header lines (`h …`) among `lines` (a record's bytes from
    /// its first header line to the end of its last, other lines skipped),
    /// copied with their table: for a record of more headers than the
    /// decoder's `Table` holds.
    init(lines: UnsafeRawBufferPointer, count: Int) {
        let table = (lines.count + 3) & ~3
        let size = table + 4 * Self.entryWords * count
        // Put together on the stack (up to 1 KiB: a record's usual size),
        // then copied into the array once: `[UInt8](bytes)`, as
        // `Array(repeating:count:)` and `Array(unsafeUninitializedCapacity:)`
        // looked up the array's generic metadata at run time on every call
        // (~530 instructions a hit).
        bytes = withUnsafeTemporaryAllocation(byteCount: size, alignment: 4) { out in
            Self.fill(out, lines: lines, table: table, count: count)
            return [UInt8](UnsafeRawBufferPointer(out))
        }
        self.table = table
        self.count = count
    }

    /// `lines` copied into `out`, and the table of their `count` header lines after them, at `table`.
    private static func fill(_ out: UnsafeMutableRawBufferPointer, lines: UnsafeRawBufferPointer, table: Int, count: Int) {
        guard let base = out.baseAddress, Self.copyLines(lines, to: base, table: table) else { return }
        var entry = base + table
        var lineStart = 0
        var found = 0
        while lineStart < lines.count, found < count {
            let rest = ByteRun(base: UnsafeRawBufferPointer(rebasing: lines[lineStart...]))
            let lineEnd = rest.firstIndex(of: 0x0A).map { lineStart + $0 } ?? lines.count
            // A header line: "h " and the header (the decoder counted these).
            if lineEnd - lineStart >= 2 && lines[lineStart] == 0x68 && lines[lineStart + 1] == 0x20 {
                let header = ByteRun(base: UnsafeRawBufferPointer(rebasing: lines[lineStart + 2..<lineEnd]))
                Self.storeHeader(entry, header, at: lineStart + 2)
                entry += 4 * Self.entryWords
                found += 1
            }
            lineStart = lineEnd + 1
        }
        precondition(found == count, "the decoder counted \(count) header lines, found \(found)")
    }

    /// `lines` copied to `base`, zero-padded to `table` bytes (the table is 4-byte aligned); false
    /// when `lines` has no storage.
    @inline(__always)
    private static func copyLines(_ lines: UnsafeRawBufferPointer, to base: UnsafeMutableRawPointer, table: Int) -> Bool {
        guard let source = lines.baseAddress else { return false }
        base.copyMemory(from: source, byteCount: lines.count)
        if table > lines.count { (base + lines.count).initializeMemory(as: UInt8.self, repeating: 0, count: table - lines.count) }
        return true
    }

    /// The entry at `entry` of `header` ("Name value", or "Name" alone with an
    /// empty value), whose first byte is at `start` of the copied lines.
    @inline(__always)
    static func storeHeader(_ entry: UnsafeMutableRawPointer, _ header: ByteRun, at start: Int) {
        let nameEnd = header.firstSpace() ?? header.count
        let valueStart = nameEnd < header.count ? nameEnd + 1 : header.count
        let kind = CacheMetadata.HeaderKind(UnsafeRawBufferPointer(rebasing: header.base[..<nameEnd]))
        storeWords(entry, start, start + nameEnd, start + valueStart, start + header.count, kind)
    }

    /// A header's entry of the table, at `entry`: where its name and value are, and its kind.
    @inline(__always)
    static func storeEntry(_ entry: UnsafeMutableRawPointer, name: Range<Int>, value: Range<Int>, kind: CacheMetadata.HeaderKind) {
        storeWords(entry, name.lowerBound, name.upperBound, value.lowerBound, value.upperBound, kind)
    }

    /// The entry's five words (no `Range` made: a hit's decoding writes one per header).
    @inline(__always)
    private static func storeWords(_ entry: UnsafeMutableRawPointer, _ nameStart: Int, _ nameEnd: Int, _ valueStart: Int,
                                   _ valueEnd: Int, _ kind: CacheMetadata.HeaderKind) {
        entry.storeBytes(of: UInt32(truncatingIfNeeded: nameStart), toByteOffset: 0, as: UInt32.self)
        entry.storeBytes(of: UInt32(truncatingIfNeeded: nameEnd), toByteOffset: 4, as: UInt32.self)
        entry.storeBytes(of: UInt32(truncatingIfNeeded: valueStart), toByteOffset: 8, as: UInt32.self)
        entry.storeBytes(of: UInt32(truncatingIfNeeded: valueEnd), toByteOffset: 12, as: UInt32.self)
        entry.storeBytes(of: UInt32(kind.rawValue), toByteOffset: 16, as: UInt32.self)
    }

    /// Word `word` of header `index`'s entry.
    @inlinable @inline(__always)
    func entry(_ index: Int, _ word: Int) -> Int {
        bytes.withUnsafeBytes { Int($0.load(fromByteOffset: table + 4 * (Self.entryWords * index + word), as: UInt32.self)) }
    }

    func kind(_ index: Int) -> CacheMetadata.HeaderKind {
        CacheMetadata.HeaderKind(rawValue: UInt8(truncatingIfNeeded: entry(index, 4))) ?? .other
    }

    /// The value's UTF-8, as `Header.value` has it: the bytes in place when
    /// they are ASCII (every value a hit reads), else those of the string
    /// made of them (invalid UTF-8 repaired, as the decoder always did).
    @inlinable
    func withValueBytes<R>(_ index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        let start = entry(index, 2), end = entry(index, 3)
        return try bytes.withUnsafeBufferPointer { all in
            let value = UnsafeBufferPointer(rebasing: all[start..<end])
            if Self.isASCII(value) { return try body(value) }
            var repaired = String(decoding: value, as: UTF8.self)
            return try repaired.withUTF8(body)
        }
    }

    /// Whether every byte is below 0x80: eight at a time, the last eight
    /// overlapping the ones before (a date's 29 bytes are four words).
    @usableFromInline
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let start = bytes.baseAddress else { return true }
        let raw = UnsafeRawPointer(start), count = bytes.count
        guard count >= 8 else {
            var any: UInt8 = 0
            for i in 0..<count { any |= bytes[i] }
            return any < 0x80
        }
        var any = raw.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        var i = 0
        while i + 8 < count {
            any |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        return any & 0x8080_8080_8080_8080 == 0
    }

    /// The first header of `kind`.
    func first(_ kind: CacheMetadata.HeaderKind) -> Int? {
        bytes.withUnsafeBytes { all in
            for index in 0..<count
            where all.load(fromByteOffset: table + 4 * (Self.entryWords * index + 4), as: UInt32.self) == UInt32(kind.rawValue) {
                return index
            }
            return nil
        }
    }

    /// The name and value runs of header `index`.
    func runs(_ index: Int, _ body: (ByteRun, ByteRun) -> CacheMetadata.Header) -> CacheMetadata.Header {
        bytes.withUnsafeBytes { all in
            body(ByteRun(base: UnsafeRawBufferPointer(rebasing: all[entry(index, 0)..<entry(index, 1)])),
                 ByteRun(base: UnsafeRawBufferPointer(rebasing: all[entry(index, 2)..<entry(index, 3)])))
        }
    }

    /// Header `index` as the decoder used to make it: common names and
    /// image types as constant strings, a longer ASCII value kept as these
    /// bytes, anything else a string (invalid UTF-8 repaired).
    func header(_ index: Int) -> CacheMetadata.Header {
        runs(index) { name, value in
            let storedName = commonHeaderName(name) ?? name.string
            if let common = commonImageType(value) { return CacheMetadata.Header(storedName, common) }
            if value.count > CacheMetadata.longestInlineValue && value.isASCII {
                return CacheMetadata.Header(storedName, record: bytes, start: entry(index, 2), end: entry(index, 3))
            }
            return CacheMetadata.Header(storedName, value.string)
        }
    }

    /// The value of header `index` as a string (`header(index).value`).
    func value(_ index: Int) -> String {
        bytes.withUnsafeBytes { all in
            let value = ByteRun(base: UnsafeRawBufferPointer(rebasing: all[entry(index, 2)..<entry(index, 3)]))
            return commonImageType(value) ?? value.string
        }
    }

    /// Whether header `index` is called `name`, in any ASCII case (as
    /// `asciiCaseInsensitiveEqual` compares the name's string).
    func isNamed(_ index: Int, _ name: String) -> Bool {
        let start = entry(index, 0), end = entry(index, 1)
        return bytes.withUnsafeBufferPointer { all in
            let stored = UnsafeBufferPointer(rebasing: all[start..<end])
            guard Self.isASCII(stored) else { return asciiCaseInsensitiveEqual(String(decoding: stored, as: UTF8.self), name) }
            return withUTF8Bytes(of: name) { name in
                guard stored.count == name.count else { return false }
                for i in 0..<name.count where stored[i] != name[i] {
                    let l = stored[i] | 0x20
                    guard l == name[i] | 0x20, l >= 0x61, l <= 0x7A else { return false }
                }
                return true
            }
        }
    }
}
