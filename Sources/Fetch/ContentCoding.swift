import Support

/// RFC 9110 §8.4.1: which items of a `Content-Encoding` field name a coding
/// to undo. The one rule for the decoder (`ContentDecoder.make`) and for
/// whoever asks whether a stored body was coded (the loader's resume check):
/// an item is compared trimmed and lowercased (`IDENTITY`, ` gzip `), and an
/// empty one (`gzip, , br`) or `identity` names none.
public enum ContentCoding {
    /// Whether one list item, already trimmed and lowercased, names no coding.
    public static func isIdentity(_ item: String) -> Bool {
        item.isEmpty || item == "identity"
    }

    /// Whether `Content-Encoding` field values (one per header line) name a coding to undo.
    public static func isCoded<Values: Sequence<String>>(_ fieldValues: Values) -> Bool {
        fieldValues.contains { value in value.split(separator: ",").contains { !isIdentity(trimWhitespaceLower($0)) } }
    }
}
