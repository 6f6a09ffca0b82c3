/// An ISO base media box (ISO/IEC 14496-12 §4.2), the one box reader that
/// both the header sniff (`ImageInfo+ISOBMFF`, the JPEG XL container) and
/// the structure walk (`BoxWalker`) use: a 32-bit size and a four-letter
/// type, then a 64-bit largesize when the size is 1; a size of 0 means the
/// box runs to the end of the file.
struct Box {
    let type: String
    /// Offset of the box's content (after size, type and any largesize) and its end.
    let start: Int
    let end: Int

    /// A box's header, read from its first 8 bytes (16 with a largesize).
    struct Header {
        let type: String
        /// 8, or 16 with a largesize.
        let length: Int
        /// The whole box, header included (a largesize past `Int.max` is `Int.max`);
        /// nil for size 0, a box that runs to the end of the file.
        let size: Int?

        /// nil when the bytes from `offset` do not hold the whole header.
        init?(_ b: Bytes, at offset: Int) {
            guard let size32 = b.u32be(offset), b.count - offset >= 8 else { return nil }
            type = Self.type(b, at: offset)
            if size32 == 1 {
                guard let large = b.u64be(offset + 8) else { return nil }
                (length, size) = (16, large)
            } else {
                (length, size) = (8, size32 == 0 ? nil : size32)
            }
        }

        /// The four-letter type of the header at `offset`.
        static func type(_ b: Bytes, at offset: Int) -> String { String(decoding: b.slice(offset + 4, 4), as: UTF8.self) }

        /// Whether a header that starts with these 8 bytes goes on with a largesize.
        static func hasLargeSize(_ first: Bytes) -> Bool { first.u32be(0) == 1 }

        /// A size smaller than the header itself.
        var isMalformed: Bool { size.map { $0 < length } ?? false }
    }

    /// Where the children of a container box start (after a full box's
    /// version and flags, and `iinf`'s entry count); nil for a box that
    /// holds data, not boxes. The containers a HEIF `meta` box holds.
    static func childrenStart(of box: Box, in b: Bytes) -> Int? {
        switch box.type {
        case "meta", "iref": return box.start + 4
        case "iprp", "ipco", "dinf", "grpl": return box.start
        case "iinf": return b.at(box.start).map { box.start + 4 + ($0 == 0 ? 2 : 4) }
        default: return nil
        }
    }

    /// The first box between `from` and `to`, at any depth of the
    /// containers there, whose size claims more bytes than the box around
    /// it (`parent`) holds, said as a sentence; nil when every box fits.
    /// Checked arithmetic: a largesize of 2^64-1 is compared, never added.
    static func overrun(_ b: Bytes, from: Int, to: Int, parent: String, depth: Int = 0) -> String? {
        var offset = from
        var count = 0
        while count < FormatLimits.isobmffBoxesPerLevel, to - offset >= 8 {
            count += 1
            guard let header = Header(b, at: offset) else {   // a largesize the box around it cannot hold
                return Header.hasLargeSize(b.dropFirst(offset)) ? "its \(Header.type(b, at: offset)) box's largesize runs past the \(parent) box around it" : nil
            }
            let room = to - offset
            let claimed = header.size ?? room                       // size 0: to the end of the box around it
            if header.length > room || claimed > room {
                return "its \(header.type) box claims more bytes than the \(parent) box around it holds (\(room))"
            }
            guard claimed >= header.length else { return nil }     // malformed: the walk and the sniff stop there
            let box = Box(type: header.type, start: offset + header.length, end: offset + claimed)
            if depth < FormatLimits.isobmffDepth, let inner = childrenStart(of: box, in: b), inner <= box.end,
               let problem = overrun(b, from: inner, to: box.end, parent: box.type, depth: depth + 1) {
                return problem
            }
            offset = box.end
        }
        return nil
    }

    /// The boxes between `from` and `to`; stops at the first malformed header.
    /// A box that runs past `to` (the end of the head read) is cut there.
    static func boxes(_ b: Bytes, from: Int, to: Int) -> [Box] {
        var out: [Box] = []
        var offset = from
        while out.count < FormatLimits.isobmffBoxesPerLevel, offset + 8 <= to, let header = Header(b, at: offset) {
            let size = header.size ?? to - offset
            guard size >= header.length else { break }
            let end = size > to - offset ? to : offset + size
            out.append(Box(type: header.type, start: offset + header.length, end: end))
            offset = end
        }
        return out
    }
}
