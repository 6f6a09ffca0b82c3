/// ISO base media files: AVIF and HEIF (`ftyp`, `meta`, `mdat`, …) and the
/// JPEG XL container (`JXL ` signature box, then `jxlc` or `jxlp` boxes).
///
/// HEIF/AVIF: top-level boxes are walked by their sizes; the `meta` box is
/// read (bounded) for its `iloc` item locations. The image ends at the end
/// of the first top-level box at or past both the `meta` box and every item
/// extent it names (the coded data, usually in `mdat`); a cut inside any box
/// before that is a cut. JPEG XL: the image ends with the `jxlc` box, or with
/// the `jxlp` box whose index has its last-part bit set. An image sequence
/// without a `meta` box ends once its `moov` and `mdat` are whole. A box that runs to
/// the end of the file (size 0) cannot be checked: the body passes.
struct BoxWalker: StructureWalker {
    private enum State { case header, largeSize, content, hugeMeta, jxlpIndex, skipping }
    private var state = State.header
    private var type = ""
    /// A header's first 8 bytes while its largesize is gathered.
    private var firstHalf: [UInt8] = []
    private var boxStart: Int64 = 0
    private var boxEnd: Int64 = 0
    private var isJXL = false
    private var metaSeen = false
    /// An image sequence without items (`moov` and `mdat`, no `meta`) ends once both are whole.
    private var moovSeen = false, mdatSeen = false
    private var lastPart = false
    private var required: Int64 = 0
    private var boxes = 0

    mutating func start() -> WalkStep { .need(8) }

    mutating func advance(_ bytes: Bytes, at offset: Int64, crc: UInt32) -> WalkStep {
        switch state {
        case .header:
            boxes += 1
            boxStart = offset
            type = Box.Header.type(bytes, at: 0)
            if boxes == 1 { isJXL = type == "JXL " }
            if Box.Header.hasLargeSize(bytes) {
                firstHalf = bytes.slice(0, 8)
                state = .largeSize
                return .need(8)
            }
            return box(Box.Header(bytes, at: 0))
        case .largeSize:
            return (firstHalf + bytes.slice(0, 8)).withUnsafeBufferPointer { box(Box.Header(Bytes($0), at: 0)) }
        case .content:
            if type == "meta", let problem = readMeta(bytes, at: offset) { return .failed(problem) }
            return after(position: offset + Int64(bytes.count))
        case .hugeMeta:
            return .undecidable   // whole, but too large to read for its item locations
        case .jxlpIndex:
            lastPart = (bytes.at(0) ?? 0) & 0x80 != 0
            state = .skipping
            return .skip(boxEnd - offset - 4, crcSeed: nil)
        case .skipping:
            return after(position: offset)
        }
    }

    private mutating func box(_ header: Box.Header?) -> WalkStep {
        guard let header else { return .undecidable }
        guard let whole = header.size else { return .undecidable }   // runs to the end of the file: nothing to check against
        let size = Int64(whole)
        guard !header.isMalformed else { return .failed("\(family) has a malformed \(type.debugDescription) box (size \(size))") }
        boxEnd = boxStart.addingReportingOverflow(size).overflow ? Int64.max : boxStart + size
        let content = size - Int64(header.length)
        if type == "meta" && !isJXL {
            guard content <= Int64(FormatLimits.gatherBytes) else {
                // Passed over, not gathered: a body that ends inside it was cut (a size of
                // 0xFFFFFFFF or a largesize of 2^64-1 on a short body); a whole one passes.
                state = .hugeMeta
                return .skip(content, crcSeed: nil)
            }
            state = .content
            return .need(Int(content))
        }
        if type == "jxlp" && content >= 4 {
            state = .jxlpIndex
            return .need(4)
        }
        state = .skipping
        return .skip(content, crcSeed: nil)
    }

    /// After a whole top-level box: the end, or the next box.
    private mutating func after(position: Int64) -> WalkStep {
        if isJXL {
            if type == "jxlc" || (type == "jxlp" && lastPart) { return .end }
        } else if metaSeen && position >= required {
            return .end
        } else if !metaSeen {
            moovSeen = moovSeen || type == "moov"
            mdatSeen = mdatSeen || type == "mdat"
            if moovSeen && mdatSeen { return .end }
        }
        state = .header
        return .need(8)
    }

    private var family: String { isJXL ? "JPEG XL" : "HEIF" }

    /// `meta` (a full box) holds `iloc`: where each item's data lies. A box
    /// inside it, at any depth, that claims more than the box around it holds
    /// means the body was cut (or its sizes lie): the returned problem.
    private mutating func readMeta(_ b: Bytes, at offset: Int64) -> String? {
        metaSeen = true
        required = max(required, boxEnd)
        if let overrun = Box.overrun(b, from: 4, to: b.count, parent: "meta") { return "AVIF/HEIF cut: \(overrun)" }
        let children = Box.boxes(b, from: 4, to: b.count)
        guard let iloc = children.first(where: { $0.type == "iloc" }) else { return nil }
        for end in Self.extentEnds(b, iloc: iloc) { required = max(required, end) }
        return nil
    }

    /// The end offset of every file-based extent in an `iloc` box (ISO/IEC 14496-12 §8.11.3).
    static func extentEnds(_ b: Bytes, iloc: Box) -> [Int64] {
        var i = iloc.start
        guard let version = b.at(i), let sizes = b.at(i + 4), let sizes2 = b.at(i + 5) else { return [] }
        let offsetSize = Int(sizes >> 4), lengthSize = Int(sizes & 15), baseSize = Int(sizes2 >> 4)
        let indexSize = version >= 1 ? Int(sizes2 & 15) : 0
        i += 6
        func read(_ width: Int) -> Int64? {
            defer { i += width }
            switch width {
            case 0: return 0
            case 4: return b.u32be(i).map(Int64.init)
            case 8: return b.u64be(i).map(Int64.init)
            default: return nil
            }
        }
        guard let items = version < 2 ? b.u16be(i).map(Int64.init) : b.u32be(i).map(Int64.init) else { return [] }
        i += version < 2 ? 2 : 4
        var ends: [Int64] = []
        for _ in 0..<min(items, FormatLimits.ilocItems) {
            i += version < 2 ? 2 : 4                       // item ID
            var method = 0
            if version >= 1 { method = (b.u16be(i) ?? 0) & 15; i += 2 }
            i += 2                                          // data reference index
            guard let base = read(baseSize), let extents = b.u16be(i) else { return ends }
            i += 2
            for _ in 0..<extents {
                if indexSize > 0 { _ = read(indexSize) }
                guard let start = read(offsetSize), let length = read(lengthSize), i <= iloc.end else { return ends }
                if method == 0 && length > 0 {
                    let (sum, overflow) = base.addingReportingOverflow(start)
                    let (end, overflow2) = sum.addingReportingOverflow(length)
                    ends.append(overflow || overflow2 ? Int64.max : end)
                }
            }
        }
        return ends
    }

    func missing(length: Int64) -> String {
        let name = isJXL ? "JPEG XL" : boxes > 0 ? "AVIF/HEIF" : "ISO BMFF"
        switch state {
        case .header, .largeSize:
            if isJXL { return "\(name) cut before its last codestream box" }
            return metaSeen ? "\(name) cut before the end of its item data (\(length) of \(required) bytes)"
                            : "\(name) cut before its meta box"
        case .content, .hugeMeta, .jxlpIndex, .skipping:
            return "\(name) cut inside its \(type) box (\(length) of \(boxEnd) bytes)"
        }
    }
}
