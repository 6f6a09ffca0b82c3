import Support

/// A 304's merge (RFC 9111 §4.3.4) made into a new header table: the stored
/// headers the 304 does not name, copied as their bytes, then the 304's own.
///
/// Before, a merge read the record's `headers` (a `Header` and its strings
/// made for each stored header), built a new `[Header]`, and the record's
/// encoding walked that array: ~700 instructions a 304 more than when the
/// decoder still made the array, for headers that are only written back.
extension RecordHeaders {
    /// `stored`'s headers that no picked field of `updates` names (in any
    /// ASCII case), in order, then the picked fields in theirs: one copy of
    /// their lines (`h Name value`) with a new table.
    init(_ stored: CacheMetadata.StoredHeaders, replacedBy updates: HeaderUpdates) {
        switch stored {
        case .record(let old):
            // Every kept header's name and value are among the old lines' bytes, each with its "h", two spaces and a newline.
            self = old.bytes.withUnsafeBytes { source in
                Self.build(lineCapacity: old.table + 4 * old.count + updates.lineBytes, entries: old.count + updates.count) { lines in
                    for index in 0..<old.count {
                        let kind = old.kind(index)
                        if updates.replace(kind, { old.isNamed(index, $0) }) { continue }
                        lines.add(name: UnsafeRawBufferPointer(rebasing: source[old.entry(index, 0)..<old.entry(index, 1)]),
                                  value: UnsafeRawBufferPointer(rebasing: source[old.entry(index, 2)..<old.entry(index, 3)]), kind: kind)
                    }
                    lines.add(updates)
                }
            }
        case .list(let list):
            var capacity = updates.lineBytes
            for header in list { capacity += header.name.utf8.count + header.valueCount + 4 }
            self = Self.build(lineCapacity: capacity, entries: list.count + updates.count) { lines in
                for header in list {
                    let kind = CacheMetadata.HeaderKind(header.name)
                    if updates.replace(kind, { asciiCaseInsensitiveEqual(header.name, $0) }) { continue }
                    withUTF8Bytes(of: header.name) { name in
                        header.withValueBytes { lines.add(name: UnsafeRawBufferPointer(name), value: UnsafeRawBufferPointer($0), kind: kind) }
                    }
                }
                lines.add(updates)
            }
        }
    }

    /// The headers `body` adds, with their table: put together on the stack
    /// (the lines, then room for `entries` entries), then copied into the
    /// array once, the table moved up to follow the lines.
    private static func build(lineCapacity: Int, entries: Int, _ body: (inout Lines) -> Void) -> RecordHeaders {
        let tableStart = (lineCapacity + 3) & ~3
        let entryBytes = 4 * entryWords
        return withUnsafeTemporaryAllocation(byteCount: tableStart + entryBytes * entries, alignment: 4) { out in
            let base = out.baseAddress!
            var lines = Lines(base: base, capacity: lineCapacity, table: base + tableStart, room: entries)
            body(&lines)
            let table = (lines.count + 3) & ~3
            (base + lines.count).initializeMemory(as: UInt8.self, repeating: 0, count: table - lines.count)
            if table < tableStart { (base + table).copyMemory(from: base + tableStart, byteCount: entryBytes * lines.entries) }
            return RecordHeaders(bytes: [UInt8](UnsafeRawBufferPointer(start: base, count: table + entryBytes * lines.entries)),
                                 table: table, count: lines.entries)
        }
    }

    private init(bytes: [UInt8], table: Int, count: Int) {
        self.bytes = bytes
        self.table = table
        self.count = count
    }

    /// Header lines written into a buffer, and their entries into a table apart.
    private struct Lines {
        let base: UnsafeMutableRawPointer
        let capacity: Int
        let table: UnsafeMutableRawPointer
        let room: Int
        private(set) var count = 0
        private(set) var entries = 0

        init(base: UnsafeMutableRawPointer, capacity: Int, table: UnsafeMutableRawPointer, room: Int) {
            self.base = base
            self.capacity = capacity
            self.table = table
            self.room = room
        }

        /// `h Name value\n`, and its entry.
        mutating func add(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, kind: CacheMetadata.HeaderKind) {
            precondition(count + name.count + value.count + 4 <= capacity && entries < room, "merged headers outgrew their bound")
            base.storeBytes(of: 0x2068, toByteOffset: count, as: UInt16.self)   // "h "
            let nameStart = count + 2, nameEnd = nameStart + name.count
            if let source = name.baseAddress { (base + nameStart).copyMemory(from: source, byteCount: name.count) }
            base.storeBytes(of: 0x20, toByteOffset: nameEnd, as: UInt8.self)
            let valueStart = nameEnd + 1, valueEnd = valueStart + value.count
            if let source = value.baseAddress { (base + valueStart).copyMemory(from: source, byteCount: value.count) }
            base.storeBytes(of: 0x0A, toByteOffset: valueEnd, as: UInt8.self)
            RecordHeaders.storeEntry(table + 4 * RecordHeaders.entryWords * entries,
                                     name: nameStart..<nameEnd, value: valueStart..<valueEnd, kind: kind)
            entries += 1
            count = valueEnd + 1
        }

        /// The picked fields of `updates`, in order.
        mutating func add(_ updates: HeaderUpdates) {
            for index in updates.fields.indices where updates.picks[index] != 0 {
                let kind = CacheMetadata.HeaderKind(rawValue: updates.picks[index] - 1) ?? .other
                withUTF8Bytes(of: updates.fields[index].name) { name in
                    withUTF8Bytes(of: updates.fields[index].value) {
                        add(name: UnsafeRawBufferPointer(name), value: UnsafeRawBufferPointer($0), kind: kind)
                    }
                }
            }
        }
    }
}

extension RecordHeaders {
    /// Whether every byte of the lines is ASCII: a record's encoding then
    /// writes each header from its bytes (`CacheMetadata.encoded`), as they
    /// are what `header(_:)`'s strings hold (only invalid UTF-8 is repaired).
    var linesAreASCII: Bool {
        bytes.withUnsafeBufferPointer { Self.isASCII(UnsafeBufferPointer(rebasing: $0[0..<table])) }
    }

    /// Each header's name and value bytes, in order.
    @inline(__always)
    func forEachHeader(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) {
        bytes.withUnsafeBytes { all in
            for index in 0..<count {
                body(UnsafeRawBufferPointer(rebasing: all[entry(index, 0)..<entry(index, 1)]),
                     UnsafeRawBufferPointer(rebasing: all[entry(index, 2)..<entry(index, 3)]))
            }
        }
    }
}

/// The fields of a response that replace stored headers, as
/// `CacheMetadata.replaceHeaders` picked them (valid only during its call:
/// `picks` is on its stack).
struct HeaderUpdates {
    let fields: [HeaderField]
    /// Per field: 0 when it is not picked, else its `HeaderKind`'s raw value + 1.
    let picks: UnsafeMutableBufferPointer<UInt8>
    /// One bit per kind (but `other`) among the picked fields.
    private(set) var kinds: UInt16 = 0
    private(set) var anyOther = false
    private(set) var count = 0
    /// What the picked fields take as header lines (`h Name value\n`).
    private(set) var lineBytes = 0

    /// The fields `isPicked` picks among `fields`, noted in `picks` (one byte a field).
    init(_ fields: [HeaderField], picks: UnsafeMutableBufferPointer<UInt8>, _ isPicked: (String) -> Bool) {
        self.fields = fields
        self.picks = picks
        for index in fields.indices {
            guard isPicked(fields[index].name) else {
                picks[index] = 0
                continue
            }
            let kind = CacheMetadata.HeaderKind(fields[index].name)
            picks[index] = kind.rawValue + 1
            if kind == .other { anyOther = true } else { kinds |= 1 << kind.rawValue }
            count += 1
            lineBytes += fields[index].name.utf8.count + fields[index].value.utf8.count + 4
        }
    }

    /// Whether a `Vary` is among the picked fields.
    var varies: Bool { kinds >> CacheMetadata.HeaderKind.vary.rawValue & 1 != 0 }

    /// Whether a picked field replaces a stored header of `kind` for which
    /// `isNamed` tells whether it is called a given name (in any ASCII case):
    /// a kind but `other` is one name in its cases, so the kinds decide;
    /// only a name of no kind is compared with the picked names of none.
    func replace(_ kind: CacheMetadata.HeaderKind, _ isNamed: (String) -> Bool) -> Bool {
        if kind != .other { return kinds >> kind.rawValue & 1 != 0 }
        guard anyOther else { return false }
        for index in fields.indices where picks[index] == 1 && isNamed(fields[index].name) { return true }
        return false
    }
}
