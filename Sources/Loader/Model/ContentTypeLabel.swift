/// A response's `Content-Type` as results carry it. An empty header
/// (`Content-Type:` with nothing after it, which some servers send) names
/// no type, so it is treated as a missing one: JSON leaves `contentType`
/// out, a line for people shows none (`cache list`: `-`), rather than
/// `(network, 1 B, )` and `"contentType":""`.
enum ContentTypeLabel {
    static func of(_ header: String?) -> String? {
        guard let header else { return nil }
        // A type nearly always starts at the first byte: that byte decides, with no scan (~60
        // instructions a hit).
        if let first = header.utf8.first, first != 0x20 && first != 0x09 { return header }
        guard header.utf8.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { return nil }
        return header
    }
}
