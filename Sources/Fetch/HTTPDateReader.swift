/// Reads the three forms of RFC 9110 §5.6.7 from a date's UTF-8 bytes,
/// exactly by the grammar (see `HTTPDate`). Each form is a fixed layout, so
/// each reader checks lengths and separators, then the fields.
struct HTTPDateReader {
    private let b: UnsafeBufferPointer<UInt8>

    init(_ bytes: UnsafeBufferPointer<UInt8>) { b = bytes }

    // As bytes: every cache hit parses a date or two (`Date`, `Last-Modified`),
    // so no String is made, and the common form is read by fixed offsets
    // (callgrind: ~600 instructions a date before, with arrays and loops).
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"].map { Array($0.utf8) }
    static let gmt = Array("GMT".utf8)

    /// "Sun, 06 Nov 1994 08:49:37 GMT": 29 bytes, read as four words (bytes
    /// 0, 8, 16 and 21 on): the separators and "GMT" compared under a mask,
    /// the 14 digits checked eight lanes at a time (every one 0x30…0x39),
    /// the names looked up as before. The same dates as a byte at a time
    /// (every hit reads one or two: ~245 instructions a date that way).
    func imfFixdate() -> Double? {
        guard b.count == 29, let p = b.baseAddress else { return nil }
        let raw = UnsafeRawPointer(p)
        let w0 = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))
        let w1 = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        let w2 = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        let w3 = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 21, as: UInt64.self))
        // ", " at 3, " " at 7 | " " at 11 | " " at 16, ":" at 19 and 22 | " GMT" at 25.
        guard w0 & 0xFF00_00FF_FF00_0000 == 0x2000_0020_2C00_0000,
              w1 & 0x0000_0000_FF00_0000 == 0x0000_0000_2000_0000,
              w2 & 0x00FF_0000_FF00_00FF == 0x003A_0000_3A00_0020,
              w3 & 0xFFFF_FFFF_0000_0000 == 0x544D_4720_0000_0000
        else { return nil }
        // Digits: 5-6 | 12-15 | 17-18, 20-21, 23 | 24.
        guard let d0 = Self.digitLanes(w0, 0x00FF_FF00_0000_0000), let d1 = Self.digitLanes(w1, 0xFFFF_FFFF_0000_0000),
              let d2 = Self.digitLanes(w2, 0xFF00_FFFF_00FF_FF00), let d3 = Self.digitLanes(w3, 0x0000_0000_FF00_0000),
              Self.dayIndex(Self.packed(w0)) != nil, let month = Self.monthIndex(Self.packed(w1))
        else { return nil }
        func digit(_ lanes: UInt64, _ lane: Int) -> Int { Int(truncatingIfNeeded: (lanes >> UInt64(8 * lane)) & 0xFF) }
        return HTTPDate.seconds(year: digit(d1, 4) &* 1000 &+ digit(d1, 5) &* 100 &+ digit(d1, 6) &* 10 &+ digit(d1, 7),
                                month: month + 1, day: digit(d0, 5) &* 10 &+ digit(d0, 6),
                                hour: digit(d2, 1) &* 10 &+ digit(d2, 2), minute: digit(d2, 4) &* 10 &+ digit(d2, 5),
                                second: digit(d2, 7) &* 10 &+ digit(d3, 3))
    }

    /// The bytes of `word` under `mask` (whole bytes) as their digits' values
    /// (other lanes zero), or nil unless each of them is 0x30…0x39: its high
    /// half 3, and still 3 with 6 added (no lane can carry into the next).
    @inline(__always)
    private static func digitLanes(_ word: UInt64, _ mask: UInt64) -> UInt64? {
        let lanes = word & mask, highs = mask & 0xF0F0_F0F0_F0F0_F0F0, threes = mask & 0x3030_3030_3030_3030
        guard lanes & highs == threes, (lanes &+ (mask & 0x0606_0606_0606_0606)) & highs == threes else { return nil }
        return lanes & 0x0F0F_0F0F_0F0F_0F0F
    }

    /// The three bytes at the start of `word` (little-endian) as `packed` makes them.
    @inline(__always)
    private static func packed(_ word: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: word).byteSwapped >> 8
    }

    /// "Sunday, 06-Nov-94 08:49:37 GMT": a long day name, then 24 fixed bytes.
    func rfc850Date() -> Double? {
        guard let comma = (0..<min(b.count, 10)).first(where: { b[$0] == 0x2C }),
              Self.longDayNames.contains(where: { $0.count == comma && text(0, $0) }) else { return nil }
        let s = comma + 2   // the day
        guard b.count == s + 22, b[comma + 1] == 0x20, b[s + 2] == 0x2D, b[s + 6] == 0x2D, b[s + 9] == 0x20,
              b[s + 18] == 0x20, text(s + 19, Self.gmt),
              let day = digits(s, 2), let month = word(s + 3, in: Self.monthIndex), let twoDigit = digits(s + 7, 2),
              let time = timeOfDay(s + 10) else { return nil }
        return HTTPDate.seconds(year: HTTPDate.fullYear(twoDigit: twoDigit), month: month + 1, day: day,
                                hour: time.0, minute: time.1, second: time.2)
    }

    /// "Sun Nov  6 08:49:37 1994": 24 bytes; a 1-digit day after an extra space.
    func asctimeDate() -> Double? {
        guard b.count == 24, word(0, in: Self.dayIndex) != nil, b[3] == 0x20, b[7] == 0x20, b[10] == 0x20,
              b[19] == 0x20, let month = word(4, in: Self.monthIndex),
              let day = b[8] == 0x20 ? digits(9, 1) : digits(8, 2),
              let time = timeOfDay(11), let year = digits(20, 4) else { return nil }
        return HTTPDate.seconds(year: year, month: month + 1, day: day, hour: time.0, minute: time.1, second: time.2)
    }

    /// "08:49:37" at `at`: two digits each, colons between.
    private func timeOfDay(_ at: Int) -> (Int, Int, Int)? {
        guard b[at + 2] == 0x3A, b[at + 5] == 0x3A, let hour = digits(at, 2), let minute = digits(at + 3, 2),
              let second = digits(at + 6, 2) else { return nil }
        return (hour, minute, second)
    }

    /// The value of exactly `count` ASCII digits at `at`.
    private func digits(_ at: Int, _ count: Int) -> Int? {
        var value = 0
        for i in at..<at + count {
            guard b[i] >= 0x30 && b[i] <= 0x39 else { return nil }
            value = value * 10 + Int(b[i] - 0x30)
        }
        return value
    }

    /// Whether the bytes at `at` are `expected`, case-sensitively.
    private func text(_ at: Int, _ expected: [UInt8]) -> Bool {
        guard at + expected.count <= b.count else { return false }
        for offset in expected.indices where b[at + offset] != expected[offset] { return false }
        return true
    }

    /// The index of the three-letter day or month name at `at` (case-sensitive).
    private func word(_ at: Int, in index: (UInt32) -> Int?) -> Int? {
        guard at + 3 <= b.count else { return nil }
        return index(Self.packed(b[at], b[at + 1], b[at + 2]))
    }

    /// "Mon" … "Sun" (`packed`) as 0 … 6.
    private static func dayIndex(_ name: UInt32) -> Int? {
        switch name {
        case 0x4D6F6E: 0   // Mon
        case 0x547565: 1   // Tue
        case 0x576564: 2   // Wed
        case 0x546875: 3   // Thu
        case 0x467269: 4   // Fri
        case 0x536174: 5   // Sat
        case 0x53756E: 6   // Sun
        default: nil
        }
    }

    /// "Jan" … "Dec" (`packed`) as 0 … 11.
    private static func monthIndex(_ name: UInt32) -> Int? {
        switch name {
        case 0x4A616E: 0    // Jan
        case 0x466562: 1    // Feb
        case 0x4D6172: 2    // Mar
        case 0x417072: 3    // Apr
        case 0x4D6179: 4    // May
        case 0x4A756E: 5    // Jun
        case 0x4A756C: 6    // Jul
        case 0x417567: 7    // Aug
        case 0x536570: 8    // Sep
        case 0x4F6374: 9    // Oct
        case 0x4E6F76: 10   // Nov
        case 0x446563: 11   // Dec
        default: nil
        }
    }

    private static func packed(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt32 {
        UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c)
    }
}
