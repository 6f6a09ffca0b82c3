import protocol Support.ByteSink

/// Builds one JSON object on one line, fields in the order they are added
/// (SPEC §3's shapes), with strings escaped per RFC 8259.
///
/// Public so a Swift program writes the same lines as the tool. Built as UTF-8 bytes: with `--json` every phase change of every URL is
/// one of these, so string concatenation was a large share of a cached run.
/// The writing is `JSONFields`'s; the tool writes a result's line straight
/// into its output (`ResultLine.json(_:into:)`), this is the same object
/// with an array of its own.
public struct JSONLine: Sendable {
    /// Open (`{` and the fields so far); `render` and `rendered` close it.
    private var fields: JSONFields<[UInt8]>

    public init() {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        fields = JSONFields(opening: bytes)
    }

    /// A line filled by `fill` (the fields `ResultLine` writes either way).
    init(_ fill: (inout JSONFields<[UInt8]>) -> Void) {
        self.init()
        fill(&fields)
    }

    public mutating func add(_ name: StaticString, _ value: String?) { fields.add(name, value) }
    public mutating func add(_ name: StaticString, _ value: Int?) { fields.add(name, value) }
    public mutating func add(_ name: StaticString, _ value: Int64?) { fields.add(name, value) }
    public mutating func add(_ name: StaticString, _ value: Bool) { fields.add(name, value) }
    public mutating func add(_ name: StaticString, _ values: [String]) { fields.add(name, values) }

    /// Milliseconds with one decimal.
    public mutating func add(_ name: StaticString, milliseconds seconds: Double) { fields.add(name, milliseconds: seconds) }

    public mutating func add(_ name: StaticString, object: JSONLine) { fields.add(name, object: object) }

    /// The object's bytes, closed, after `out`'s.
    public func render(to out: inout [UInt8]) {
        render(into: &out)
    }

    /// The object's bytes, closed, after `out`'s (any sink).
    func render<Sink: ByteSink>(into out: inout Sink) {
        fields.sink.withUnsafeBufferPointer { out.append(contentsOf: $0) }
        out.append(0x7D)   // "}"
    }

    public var rendered: String {
        var out = fields.sink
        out.append(0x7D)   // "}"
        return String(decoding: out, as: UTF8.self)
    }

    public static func quote(_ value: String) -> String {
        var out: [UInt8] = []
        appendQuoted(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `"value"`, escaping quotes, backslashes and control characters;
    /// everything else (UTF-8 included) is copied as it is.
    public static func appendQuoted(_ value: String, to out: inout [UInt8]) {
        JSONFields.appendQuoted(value, to: &out)
    }
}
