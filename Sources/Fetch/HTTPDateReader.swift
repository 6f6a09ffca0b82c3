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

    /// "Sun, 06 Nov 1994 08:49:37 GMT": 29 bytes.
    func imfFixdate() -> Double? {
        guard b.count == 29, let p = b.baseAddress else { return nil }
        guard p[3] == 0x2C, p[4] == 0x20, p[7] == 0x20, p[11] == 0x20, p[16] == 0x20, p[25] == 0x20,
              p[26] == 0x47, p[27] == 0x4D, p[28] == 0x54,   // "GMT"
              Self.dayIndex(Self.packed(p[0], p[1], p[2])) != nil,
              let day = Self.twoDigits(p, 5), let month = Self.monthIndex(Self.packed(p[8], p[9], p[10])),
              let century = Self.twoDigits(p, 12), let years = Self.twoDigits(p, 14),
              p[19] == 0x3A, p[22] == 0x3A,
              let hour = Self.twoDigits(p, 17), let minute = Self.twoDigits(p, 20), let second = Self.twoDigits(p, 23)
        else { return nil }
        return HTTPDate.seconds(year: century * 100 + years, month: month + 1, day: day, hour: hour, minute: minute, second: second)
    }

    /// The two ASCII digits at `p + at` as a number, or nil.
    @inline(__always)
    private static func twoDigits(_ p: UnsafePointer<UInt8>, _ at: Int) -> Int? {
        let tens = p[at] &- 0x30, ones = p[at + 1] &- 0x30
        guard tens <= 9, ones <= 9 else { return nil }
        return Int(tens) &* 10 &+ Int(ones)
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
