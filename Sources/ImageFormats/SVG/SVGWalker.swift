/// SVG (any XML document, in fact): a small tokenizer follows tags,
/// comments, CDATA sections, processing instructions, the DOCTYPE and quoted
/// attribute values, counting open elements; the document ends where its
/// root element closes. A body that does not start like markup (after an
/// optional BOM and whitespace) is not judged here: the sniff rejects it.
struct SVGWalker: StructureWalker {
    private enum State {
        case prolog, text, open, bang, comment, cdata, declaration, instruction, startTag, endTag, quoted
    }
    private var state = State.prolog
    private var depth = 0
    private var rootOpened = false
    /// The last four bytes seen (for `-->`, `]]>`, `?>`).
    private var recent: UInt32 = 0
    private var bangCount = 0
    private var quote: UInt8 = 0
    private var slash = false
    private var brackets = 0
    /// The root element's name as it arrives; anything but `svg` is not judged here (nor stored: the sniff rejects it).
    private var rootName: [UInt8]? = []

    mutating func start() -> WalkStep { .stream }
    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep { .stream }

    mutating func stream(_ chunk: UnsafeBufferPointer<UInt8>, at offset: Int64) -> (used: Int, next: WalkStep?) {
        for (i, c) in chunk.enumerated() {
            recent = recent << 8 | UInt32(c)
            if let next = consume(c) { return (i + 1, next) }
        }
        return (chunk.count, nil)
    }

    private mutating func consume(_ c: UInt8) -> WalkStep? {
        switch state {
        case .prolog:
            if c == 0xEF || c == 0xBB || c == 0xBF || c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { return nil }
            guard c == UInt8(ascii: "<") else { return .undecidable }   // not markup: the sniff decides
            state = .open
        case .text:
            if c == UInt8(ascii: "<") { state = .open }
        case .open:
            switch c {
            case UInt8(ascii: "!"): state = .bang; bangCount = 0
            case UInt8(ascii: "?"): state = .instruction
            case UInt8(ascii: "/"): state = .endTag
            default:
                state = .startTag
                slash = false
                return root(c)
            }
        case .bang:   // "<!--" a comment, "<![CDATA[" a CDATA section, else a declaration (DOCTYPE)
            bangCount += 1
            if bangCount == 1 && c == UInt8(ascii: "[") {
                state = .cdata
                recent = 0
            } else if bangCount == 2 && c == UInt8(ascii: "-") {
                state = .comment
                recent = 0
            } else if bangCount == 2 || c != UInt8(ascii: "-") {
                state = .declaration
                brackets = 0
            }
        case .comment:
            if recent & 0xFF_FFFF == 0x2D2D3E { state = .text }                                      // "-->"
        case .cdata:
            if recent & 0xFF_FFFF == 0x5D5D3E { state = .text }                                      // "]]>"
        case .declaration:
            if c == UInt8(ascii: "[") { brackets += 1 } else if c == UInt8(ascii: "]") { brackets -= 1 }
            else if c == UInt8(ascii: ">") && brackets <= 0 { state = .text }
        case .instruction:
            if recent & 0xFFFF == 0x3F3E { state = .text }                                           // "?>"
        case .startTag:
            if let next = root(c) { return next }
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") { quote = c; state = .quoted; return nil }
            if c == UInt8(ascii: ">") {
                state = .text
                rootOpened = true
                if !slash { depth += 1 } else if depth == 0 { return .end }   // a self-closed root
                return nil
            }
            slash = c == UInt8(ascii: "/")
        case .quoted:
            if c == quote { state = .startTag; slash = false }
        case .endTag:
            if c == UInt8(ascii: ">") {
                state = .text
                depth -= 1
                if depth <= 0 && rootOpened { return .end }
            }
        }
        return nil
    }

    /// Collects the root element's name; an HTML page (or any other XML) stops here, undecided.
    private mutating func root(_ c: UInt8) -> WalkStep? {
        guard !rootOpened, var name = rootName else { return nil }
        let isName = c != UInt8(ascii: ">") && c != UInt8(ascii: "/") && c > 0x20
        if isName && name.count < 4 {
            name.append(c)
            rootName = name
            return nil
        }
        rootName = nil
        return name == Array("svg".utf8) ? nil : .undecidable
    }

    func missing(length: Int64) -> String {
        switch state {
        case .prolog: return "SVG is empty"
        case .comment: return "SVG cut inside a comment"
        case .cdata: return "SVG cut inside a CDATA section"
        case .quoted, .startTag, .endTag: return "SVG cut inside a tag"
        default: return rootOpened ? "SVG cut before its root element closes (\(depth) open)" : "SVG cut before its root element"
        }
    }
}
