/// SVG has no magic bytes: it is an XML (or bare) document whose root
/// element is `<svg`. Look past a BOM, whitespace, the XML declaration,
/// comments and a DOCTYPE, then read `width`/`height` (plain numbers or px)
/// or, failing that, the `viewBox`.
enum SVGSniffer {
    static func sniff(_ b: Bytes) -> ImageInfo? {
        let limit = min(b.count, FormatLimits.svgSniffBytes)
        var text = String(decoding: b.slice(0, limit), as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        var rest = Substring(text)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
            if rest.hasPrefix("<?") || rest.hasPrefix("<!") {
                let close = rest.hasPrefix("<!--") ? "-->" : ">"
                guard let end = find(close, in: rest) else { return nil }
                rest = rest[end...]
                continue
            }
            break
        }
        guard rest.hasPrefix("<svg"), let after = rest.dropFirst(4).first,
              after == " " || after == ">" || after == "\n" || after == "\t" || after == "\r" || after == "/" else { return nil }
        let tagEnd = rest.firstIndex(of: ">") ?? rest.endIndex
        let tag = rest[..<tagEnd]
        var width = attribute("width", in: tag).flatMap(length)
        var height = attribute("height", in: tag).flatMap(length)
        if width == nil || height == nil, let box = attribute("viewBox", in: tag) {
            let parts = box.split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Double($0) }
            if parts.count == 4 {
                width = width ?? pixels(parts[2])
                height = height ?? pixels(parts[3])
            }
        }
        return ImageInfo(format: .svg, width: width, height: height)
    }

    private static func find(_ needle: String, in text: Substring) -> Substring.Index? {
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix(needle) { return text.index(index, offsetBy: needle.count) }
            index = text.index(after: index)
        }
        return nil
    }

    private static func attribute(_ name: String, in tag: Substring) -> String? {
        var search = tag[...]
        while let end = find(name + "=", in: search) {
            let start = search.index(end, offsetBy: -(name.count + 1))
            let before = start > tag.startIndex ? tag[tag.index(before: start)] : " "
            search = tag[end...]
            guard before == " " || before == "\n" || before == "\t" || before == "\r" else { continue }
            guard let quote = search.first, quote == "\"" || quote == "'" else { continue }
            let value = search.dropFirst().prefix { $0 != quote }
            return String(value)
        }
        return nil
    }

    private static func length(_ value: String) -> Int? {
        var number = Substring(value)
        if number.hasSuffix("px") { number = number.dropLast(2) }
        return Double(number).flatMap(pixels)
    }

    /// Largest size believed: the numbers come from the document, and a
    /// converted `9.3e18` or `1e30` would trap (SVG sizes are not bounded).
    static let maxPixels: Double = 1e15

    /// A size in whole pixels; nil for what no image has (negative, NaN, huge).
    static func pixels(_ value: Double) -> Int? {
        guard value.isFinite, value >= 0, value <= maxPixels else { return nil }
        return Int(value.rounded())
    }
}
