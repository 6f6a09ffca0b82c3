/// Text from a URL list or a server, as a line for people shows it: control
/// characters written as escapes (`\x1B`, `\u{9B}`), as the result lines
/// write them (`LineBytes.appendShown`), so no line can move the cursor,
/// recolour or retitle the terminal. For the lines built as strings: the
/// cache commands' (`cache list`'s content type, `cache path` and `rm`'s
/// URLs) and warnings (a remote tier object's first bytes).
/// Escaping twice changes nothing: an escape has no control character.
public enum ShownText {
    public static func of(_ text: String) -> String {
        // The usual text has none: no copy.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 }) else { return text }
        var bytes: [UInt8] = []
        _ = LineBytes.build(into: &bytes) { line in
            line.appendShown(text)
            return true
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
