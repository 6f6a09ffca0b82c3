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

    /// The boxes between `from` and `to`; stops at the first malformed header.
    /// A box that runs past `to` (the end of the head read) is cut there.
    static func boxes(_ b: Bytes, from: Int, to: Int) -> [Box] {
        var out: [Box] = []
        var offset = from
        while out.count < 512, offset + 8 <= to, let header = Header(b, at: offset) {
            let size = header.size ?? to - offset
            guard size >= header.length else { break }
            let end = size > to - offset ? to : offset + size
            out.append(Box(type: header.type, start: offset + header.length, end: end))
            offset = end
        }
        return out
    }
}
