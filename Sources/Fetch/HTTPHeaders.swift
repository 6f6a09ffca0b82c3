import Support

/// Header fields of one HTTP response or request, in arrival order.
/// Look-ups are case-insensitive, as HTTP field names are.
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// One field, name and value (a struct in Support: see `HeaderField`).
    public typealias Field = HeaderField
    public private(set) var fields: [Field]
    /// Whether every field is known to be sendable (`problem` nil for each, checked by
    /// `init(sendable:)`): `firstProblem` then checks nothing. A field added clears it.
    private(set) var checked = false

    public init(_ fields: [Field] = []) { self.fields = fields }

    /// The fields of `candidates` that can be sent (`HTTPHeaders.problem` nil), in order; the others
    /// are left out. For fields a request sends only if it can, copied from elsewhere (a stored
    /// entry's validators: `Revalidation.conditionalHeaders`): each is checked here once, and not
    /// again when the request is prepared (`FetchClient.prepare`, per revalidation), unless a field is added.
    public init(sendable candidates: [Field]) {
        fields = candidates   // usually all of them: no new array
        if fields.contains(where: { Self.problem(name: $0.name, value: $0.value) != nil }) {
            fields.removeAll { Self.problem(name: $0.name, value: $0.value) != nil }
        }
        checked = true
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
        checked = false
    }

    /// Replaces every field called `name` with one field.
    public mutating func set(name: String, value: String) {
        remove(name: name)
        fields.append(Field(name: name, value: value))
        checked = false
    }

    // Names compare as ASCII, case-insensitively, in place: field names are
    // tokens (RFC 9110 §5.1), and a look-up runs several times per response.

    public mutating func remove(name: String) {
        fields.removeAll { asciiCaseInsensitiveEqual($0.name, name) }
    }

    /// The first value of `name`, or nil.
    public subscript(name: String) -> String? {
        // By index, as `values`: `first` copied every field it passed (a 304's ETag comes last from nginx).
        for index in fields.indices where asciiCaseInsensitiveEqual(fields[index].name, name) { return fields[index].value }
        return nil
    }

    /// Every value of `name`, in order (for repeated fields such as `Cache-Control`).
    public func values(_ name: String) -> [String] {
        var found: [String] = []
        // By index: `for field in fields` copied every field (two retains and releases) to read its name.
        for index in fields.indices where asciiCaseInsensitiveEqual(fields[index].name, name) { found.append(fields[index].value) }
        return found
    }

    /// All values of `name` joined with ", " (RFC 9110 §5.3), or nil.
    public func combined(_ name: String) -> String? {
        let all = values(name)
        return all.isEmpty ? nil : all.joined(separator: ", ")
    }

    public var isEmpty: Bool { fields.isEmpty }
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}
