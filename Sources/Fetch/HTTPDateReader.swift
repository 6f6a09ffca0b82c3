/// Reads the three forms of RFC 9110 §5.6.7 from a date's UTF-8 bytes,
/// exactly by the grammar (see `HTTPDate`). Each form is a fixed layout, so
/// each reader checks lengths and separators, then the fields.
struct HTTPDateReader {
    private let b: UnsafeBufferPointer<UInt8>

    init(_ bytes: UnsafeBufferPointer<UInt8>) { b = bytes }

    // As bytes: every cache hit may parse a date or two, so no String is made.
    // Three-letter names as one number each (`packed`): one comparison per name.
    static let dayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { packed(Array($0.utf8)) }
    static let longDayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"].map { Array($0.utf8) }
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"].map { packed(Array($0.utf8)) }
    static let gmt = Array("GMT".utf8)

    /// "Sun, 06 Nov 1994 08:49:37 GMT": 29 bytes.
    func imfFixdate() -> Double? {
        guard b.count == 29, word(0, in: Self.dayNames) != nil, b[3] == 0x2C, b[4] == 0x20, b[7] == 0x20,
              b[11] == 0x20, b[16] == 0x20, b[25] == 0x20, text(26, Self.gmt),
              let day = digits(5, 2), let month = word(8, in: Self.monthNames), let year = digits(12, 4),
              let time = timeOfDay(17) else { return nil }
        return HTTPDate.seconds(year: year, month: month + 1, day: day, hour: time.0, minute: time.1, second: time.2)
    }

    /// "Sunday, 06-Nov-94 08:49:37 GMT": a long day name, then 24 fixed bytes.
    func rfc850Date() -> Double? {
        guard let comma = (0..<min(b.count, 10)).first(where: { b[$0] == 0x2C }),
              Self.longDayNames.contains(where: { $0.count == comma && text(0, $0) }) else { return nil }
        let s = comma + 2   // the day
        guard b.count == s + 22, b[comma + 1] == 0x20, b[s + 2] == 0x2D, b[s + 6] == 0x2D, b[s + 9] == 0x20,
              b[s + 18] == 0x20, text(s + 19, Self.gmt),
              let day = digits(s, 2), let month = word(s + 3, in: Self.monthNames), let twoDigit = digits(s + 7, 2),
              let time = timeOfDay(s + 10) else { return nil }
        return HTTPDate.seconds(year: HTTPDate.fullYear(twoDigit: twoDigit), month: month + 1, day: day,
                                hour: time.0, minute: time.1, second: time.2)
    }

    /// "Sun Nov  6 08:49:37 1994": 24 bytes; a 1-digit day after an extra space.
    func asctimeDate() -> Double? {
        guard b.count == 24, word(0, in: Self.dayNames) != nil, b[3] == 0x20, b[7] == 0x20, b[10] == 0x20,
              b[19] == 0x20, let month = word(4, in: Self.monthNames),
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

    /// The index in `names` (three-byte names, `packed`) of the name at `at`.
    private func word(_ at: Int, in names: [UInt32]) -> Int? {
        guard at + 3 <= b.count else { return nil }
        return names.firstIndex(of: Self.packed(b[at], b[at + 1], b[at + 2]))
    }

    private static func packed(_ name: [UInt8]) -> UInt32 { packed(name[0], name[1], name[2]) }

    private static func packed(_ a: UInt8, _ b: UInt8, _ c: UInt8) -> UInt32 {
        UInt32(a) << 16 | UInt32(b) << 8 | UInt32(c)
    }
}
