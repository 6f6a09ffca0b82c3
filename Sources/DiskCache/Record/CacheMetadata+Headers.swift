import Support

/// Reading the stored response headers without the `headers` array: by
/// position and by what they are. `HTTPCaching.Freshness` and a hit's result
/// read them this way; for a decoded record (`RecordHeaders`) nothing is
/// copied and no name compared again.
extension CacheMetadata {
    /// Where the stored response headers are: a list (given by a caller,
    /// or set), or a decoded record's bytes.
    @usableFromInline
    enum StoredHeaders: Sendable, Equatable {
        case list([Header])
        case record(RecordHeaders)

        var headers: [Header] {
            switch self {
            case .list(let list): return list
            case .record(let record): return (0..<record.count).map(record.header)
            }
        }

        @usableFromInline
        static func == (a: StoredHeaders, b: StoredHeaders) -> Bool { a.headers == b.headers }
    }

    /// The stored header names a hit, freshness or revalidation reads,
    /// recognised in any ASCII case; `other` for every other name.
    package enum HeaderKind: UInt8, Sendable {
        case other, date, expires, lastModified, age, cacheControl, contentType, vary, etag

        /// The kind of a header called `name` (its UTF-8 bytes).
        init(_ name: UnsafeRawBufferPointer) {
            let run = ByteRun(base: name)
            switch name.count {
            case 3 where run.equalsIgnoringCase("Age"): self = .age
            case 4 where run.equalsIgnoringCase("Date"): self = .date
            case 4 where run.equalsIgnoringCase("Vary"): self = .vary
            case 4 where run.equalsIgnoringCase("ETag"): self = .etag
            case 7 where run.equalsIgnoringCase("Expires"): self = .expires
            case 12 where run.equalsIgnoringCase("Content-Type"): self = .contentType
            case 13 where run.equalsIgnoringCase("Last-Modified"): self = .lastModified
            case 13 where run.equalsIgnoringCase("Cache-Control"): self = .cacheControl
            default: self = .other
            }
        }

        /// The kind of a header called `name`.
        package init(_ name: String) {
            self = withUTF8Bytes(of: name) { Self(UnsafeRawBufferPointer($0)) }
        }
    }

    /// RFC 9111 §4.3.4's merge of a 304: the `fields` that `isStored` picks
    /// replace every stored header of their names (in any ASCII case) and
    /// follow the kept ones, in their order. The kept headers of a decoded
    /// record are copied as its bytes (`RecordHeaders(_:replacedBy:)`): no
    /// `headers` array, no `String` made for them. Nothing changes when no
    /// field is picked. Returns how many were, and whether a `Vary` was.
    package mutating func replaceHeaders(with fields: [HeaderField],
                                         picking isStored: (String) -> Bool) -> (count: Int, varies: Bool) {
        guard !fields.isEmpty else { return (0, false) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: fields.count) { picks in
            let updates = HeaderUpdates(fields, picks: picks, isStored)
            if updates.count > 0 { storedHeaders = .record(RecordHeaders(storedHeaders, replacedBy: updates)) }
            return (updates.count, updates.varies)
        }
    }

    /// How many response headers are stored (`headers.count`, with no array made).
    package var headerCount: Int {
        switch storedHeaders {
        case .list(let list): list.count
        case .record(let record): record.count
        }
    }

    /// What the header at `index` (of `headers`) is.
    package func headerKind(at index: Int) -> HeaderKind {
        switch storedHeaders {
        case .list(let list): HeaderKind(list[index].name)
        case .record(let record): record.kind(index)
        }
    }

    /// The UTF-8 of `headers[index].value`, borrowed for the call (read in
    /// place from a decoded record: see `Header.withValueBytes`).
    @inlinable
    package func withHeaderValue<R>(at index: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        switch storedHeaders {
        case .list(let list): try list[index].withValueBytes(body)
        case .record(let record): try record.withValueBytes(index, body)
        }
    }

    /// `headers[index].value`.
    package func headerValue(at index: Int) -> String {
        switch storedHeaders {
        case .list(let list): list[index].value
        case .record(let record): record.value(index)
        }
    }

    /// First stored value of a response header (case-insensitive).
    public func header(_ name: String) -> String? {
        guard let index = firstIndex(of: name) else { return nil }
        return headerValue(at: index)
    }

    /// The first stored value of a header of `kind` (not `other`): `header`,
    /// with the name recognised already (a hit asks for `Content-Type` and `Vary`).
    package func header(_ kind: HeaderKind) -> String? {
        guard let index = firstIndex(of: kind) else { return nil }
        return headerValue(at: index)
    }

    /// Whether a header of `kind` (not `other`) is stored.
    package func hasHeader(_ kind: HeaderKind) -> Bool { firstIndex(of: kind) != nil }

    /// First stored field called `name` (case-insensitive), as `header` finds it: its value
    /// can be read in place (`Header.withValueBytes`), with no `String` made.
    public func field(_ name: String) -> Header? {
        guard let index = firstIndex(of: name) else { return nil }
        switch storedHeaders {
        case .list(let list): return list[index]
        case .record(let record): return record.header(index)
        }
    }

    /// The first header called `name`: a name a hit or revalidation asks for
    /// (`Content-Type`, `Vary`, `ETag`…) by its kind, which a decoded record
    /// recognised once; any other by comparing names.
    private func firstIndex(of name: String) -> Int? {
        let kind = HeaderKind(name)
        if kind != .other { return firstIndex(of: kind) }
        switch storedHeaders {
        case .list(let list):
            // Lengths first: most stored names differ in length from the one asked for.
            let length = name.utf8.count
            return list.indices.first { list[$0].name.utf8.count == length && asciiCaseInsensitiveEqual(list[$0].name, name) }
        case .record(let record):
            return (0..<record.count).first { record.isNamed($0, name) }
        }
    }

    private func firstIndex(of kind: HeaderKind) -> Int? {
        switch storedHeaders {
        case .list(let list): list.indices.first { HeaderKind(list[$0].name) == kind }
        case .record(let record): record.first(kind)
        }
    }
}
