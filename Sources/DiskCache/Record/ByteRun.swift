#if canImport(Glibc)
import Glibc
#endif
import func Support.withUTF8Bytes

/// A borrowed run of bytes inside the metadata buffer.
struct ByteRun {
    let base: UnsafeRawBufferPointer

    var count: Int { base.count }
    subscript(i: Int) -> UInt8 { base[i] }

    func firstIndex(of byte: UInt8) -> Int? {
        guard let start = base.baseAddress, base.count > 0,
              let found = memchr(start, Int32(byte), base.count) else { return nil }
        return start.distance(to: UnsafeRawPointer(found))
    }

    /// `firstIndex(of: 0x20)` for a space that is usually near the start
    /// (after a field's or a header's name): the first 16 bytes are looked
    /// at as two words, with no call; only a later space takes `memchr`.
    @inline(__always)
    func firstSpace() -> Int? {
        guard let start = base.baseAddress else { return nil }
        var i = 0
        while i < 16 && i + 8 <= base.count {
            // A zero byte of `word ^ spaces`: the lowest flagged byte is the first space.
            let x = UInt64(littleEndian: start.loadUnaligned(fromByteOffset: i, as: UInt64.self)) ^ 0x2020_2020_2020_2020
            let found = (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
            if found != 0 { return i + found.trailingZeroBitCount >> 3 }
            i += 8
        }
        return suffix(from: i).firstIndex(of: 0x20).map { $0 + i }
    }

    func prefix(_ n: Int) -> ByteRun { ByteRun(base: UnsafeRawBufferPointer(rebasing: base[0..<n])) }
    func suffix(from i: Int) -> ByteRun { ByteRun(base: UnsafeRawBufferPointer(rebasing: base[i...])) }

    /// Whether these bytes are `literal`'s. Inlined, so that a literal of up to 16 bytes (every
    /// field and header name a record has) is compared as two words that may overlap, read from
    /// the literal's constant bytes, with no call: a record's ~20 names cost ~40 instructions
    /// each through `memcmp`.
    @inline(__always)
    func equals(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard count == base.count else { return false }
        guard let start = base.baseAddress else { return count == 0 }
        let expected = UnsafeRawPointer(literal.utf8Start)
        switch count {
        case 0:
            return true
        case 1:
            return start.load(as: UInt8.self) == expected.load(as: UInt8.self)
        case 2...3:
            return start.loadUnaligned(as: UInt16.self) == expected.loadUnaligned(as: UInt16.self)
                && start.loadUnaligned(fromByteOffset: count - 2, as: UInt16.self)
                    == expected.loadUnaligned(fromByteOffset: count - 2, as: UInt16.self)
        case 4...8:
            return start.loadUnaligned(as: UInt32.self) == expected.loadUnaligned(as: UInt32.self)
                && start.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
                    == expected.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
        case 9...16:
            return start.loadUnaligned(as: UInt64.self) == expected.loadUnaligned(as: UInt64.self)
                && start.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                    == expected.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        default:
            return memcmp(start, expected, count) == 0
        }
    }

    var string: String { String(decoding: base, as: UTF8.self) }

    /// `equals`, in any ASCII case (a letter of the literal matches either
    /// case; any other byte only itself). The exact spelling first: a
    /// record's names are nearly always written as the literal.
    @inline(__always)
    func equalsIgnoringCase(_ literal: StaticString) -> Bool {
        guard literal.utf8CodeUnitCount == base.count else { return false }
        guard let start = base.baseAddress else { return base.count == 0 }
        if memcmp(start, literal.utf8Start, base.count) == 0 { return true }
        for i in 0..<base.count where base[i] != literal.utf8Start[i] {
            let l = base[i] | 0x20
            guard l == literal.utf8Start[i] | 0x20, l >= 0x61, l <= 0x7A else { return false }
        }
        return true
    }

    /// Whether these bytes are the 32 hex digits of `key` (lowercase, as written).
    /// Compared as four words (`hexWords`), with no buffer of digits.
    func matches(_ key: MD5.Digest) -> Bool {
        guard count == 32, let start = base.baseAddress else { return false }
        let words = key.hexWords()
        return start.loadUnaligned(as: UInt64.self) == words.0
            && start.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == words.1
            && start.loadUnaligned(fromByteOffset: 16, as: UInt64.self) == words.2
            && start.loadUnaligned(fromByteOffset: 24, as: UInt64.self) == words.3
    }

    /// Whether these bytes decode to `text`: compared in place when they
    /// are the same bytes or both plain ASCII (then equal bytes and equal
    /// strings are the same thing); otherwise as strings, as `string == text`.
    func matches(_ text: String) -> Bool {
        // Borrowed bytes (no copy, no retain) for a native string, else a copy.
        let inPlace = withUTF8Bytes(of: text) { expected -> Bool? in
            if expected.count == base.count,
               expected.count == 0 || memcmp(expected.baseAddress!, base.baseAddress!, base.count) == 0 { return true }
            return Self.isASCII(UnsafeRawBufferPointer(expected)) && Self.isASCII(base) ? false : nil
        }
        return inPlace ?? (string == text)
    }

    /// Whether every byte is below 0x80 (a hit asks this of its two dates).
    var isASCII: Bool { Self.isASCII(base) }

    /// Whether every byte of `bytes` is below 0x80: eight bytes at a time.
    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let start = bytes.baseAddress else { return true }
        let count = bytes.count
        var bits: UInt64 = 0, i = 0
        while i + 8 <= count {
            bits |= start.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < count {
            bits |= UInt64(start.load(fromByteOffset: i, as: UInt8.self))
            i += 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }

    /// A decimal integer with an optional leading `-`; nil on anything else or overflow.
    /// Up to 19 digits (every record's numbers) are read eight at a time
    /// (`digits`) into a `UInt64`, which 19 digits cannot overflow, then
    /// range-checked once; longer runs (leading zeros) take the checked loop.
    var integer: Int64? {
        guard let start = base.baseAddress, count > 0 else { return nil }
        let negative = start.load(as: UInt8.self) == 0x2D
        let first = negative ? 1 : 0
        guard first < count else { return nil }
        guard count - first <= 19 else { return checkedInteger(from: first, negative: negative) }
        var value: UInt64 = 0
        guard Self.digits(start, from: first, to: count, into: &value) == count, value <= UInt64(Int64.max) else { return nil }
        return negative ? -Int64(value) : Int64(value)
    }

    /// `integer` for more than 19 digits, one at a time with overflow checks.
    private func checkedInteger(from first: Int, negative: Bool) -> Int64? {
        var value: Int64 = 0
        for i in first..<count {
            let digit = base[i] &- 0x30
            guard digit <= 9 else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(digit))
            guard !o1 && !o2 else { return nil }
            value = sum
        }
        return negative ? -value : value
    }

    /// Reads the decimal digits from `start + from` up to `end` or the first
    /// other byte into `value` (`value * 10^n + digits`, wrapping: callers
    /// bound the count) and returns where it stopped. Eight bytes that are
    /// all digits are read as one word (`eightDigits`), the rest one by one.
    @inline(__always)
    static func digits(_ start: UnsafeRawPointer, from: Int, to end: Int, into value: inout UInt64) -> Int {
        var i = from
        while i + 8 <= end, let eight = eightDigits(UInt64(littleEndian: start.loadUnaligned(fromByteOffset: i, as: UInt64.self))) {
            value = value &* 100_000_000 &+ eight
            i += 8
        }
        while i < end {
            let digit = start.load(fromByteOffset: i, as: UInt8.self) &- 0x30
            if digit > 9 { break }
            value = value &* 10 &+ UInt64(digit)
            i += 1
        }
        return i
    }

    /// The value of eight ASCII digits (the first in the lowest byte), or
    /// nil when any byte is not one: every byte's high half must be 3 and
    /// stay 3 with 6 added (so 0x30–0x39). Then pairs, fours and the eight
    /// are combined by three multiplications.
    @inline(__always)
    static func eightDigits(_ word: UInt64) -> UInt64? {
        let highs: UInt64 = 0xF0F0_F0F0_F0F0_F0F0, threes: UInt64 = 0x3030_3030_3030_3030
        guard word & highs == threes, (word &+ 0x0606_0606_0606_0606) & highs == threes else { return nil }
        var v = word & 0x0F0F_0F0F_0F0F_0F0F
        v = (v &* (10 << 8 + 1)) >> 8
        v = ((v & 0x00FF_00FF_00FF_00FF) &* (100 << 16 + 1)) >> 16
        return ((v & 0x0000_FFFF_0000_FFFF) &* (10_000 << 32 + 1)) >> 32
    }

    /// `[-]digits[.digits]` whose digits form an integer up to 2^53: exact, or nil.
    /// The integer part and the decimals are read by `digits` (eight at a
    /// time where eight are there): the digits are counted from their
    /// positions, and more than 19 of them (which could overflow) are left
    /// to `strtod`.
    private var simpleDecimal: Double? {
        guard let start = base.baseAddress else { return nil }
        let count = base.count
        if let clock = clockTime(start, count) { return clock }
        var i = 0, negative = false
        if start.load(as: UInt8.self) == 0x2D { negative = true; i = 1 }
        let first = i
        var mantissa: UInt64 = 0
        i = Self.digits(start, from: i, to: count, into: &mantissa)
        let integerDigits = i - first
        guard integerDigits > 0 else { return nil }   // a digit before any point
        var decimals = 0
        if i < count {
            guard start.load(fromByteOffset: i, as: UInt8.self) == 0x2E else { return nil }   // only a point may follow the digits
            let fractionStart = i + 1
            i = Self.digits(start, from: fractionStart, to: count, into: &mantissa)
            guard i == count else { return nil }
            decimals = i - fractionStart
            guard decimals > 0 else { return nil }   // no trailing point
        }
        guard integerDigits + decimals <= 19, decimals <= 15, mantissa <= 1 << 53 else { return nil }
        let value = Double(mantissa) / Self.powerOfTen(decimals)
        return negative ? -value : value
    }

    /// The form every stored time of the clock has (`currentUnixTime`,
    /// seconds from 2001 to 2286): ten digits, a point, one to six decimals.
    /// Read as two words, the same integer and power of ten as the general
    /// loop finds (so the same value): the first eight digits as one word,
    /// the decimals as the last eight bytes, those before the decimals (the
    /// point, digits) made leading zeros. nil for any other form (the general loop's turn).
    @inline(__always)
    private func clockTime(_ start: UnsafeRawPointer, _ count: Int) -> Double? {
        guard count >= 12, count <= 17, start.load(fromByteOffset: 10, as: UInt8.self) == 0x2E,
              let high = Self.eightDigits(UInt64(littleEndian: start.loadUnaligned(as: UInt64.self))) else { return nil }
        let ninth = start.load(fromByteOffset: 8, as: UInt8.self) &- 0x30, tenth = start.load(fromByteOffset: 9, as: UInt8.self) &- 0x30
        guard ninth <= 9, tenth <= 9 else { return nil }
        let decimals = count - 11
        let shift = UInt64(8 * (8 - decimals))
        let last = UInt64(littleEndian: start.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
        guard let fraction = Self.eightDigits(last & (UInt64.max << shift) | 0x3030_3030_3030_3030 >> (64 - shift)) else { return nil }
        var mantissa = high &* 100 &+ UInt64(ninth) &* 10 &+ UInt64(tenth)
        for _ in 0..<decimals { mantissa &*= 10 }
        mantissa &+= fraction
        guard mantissa <= 1 << 53 else { return nil }
        return Double(mantissa) / Self.powerOfTen(decimals)
    }

    /// 10^n for n in 0…15, each exactly representable. A switch of
    /// literals, not a global array: three times per hit, an array cost a
    /// lazy-initialisation check and a bounds check each (callgrind: 408
    /// instructions per stored time, with the array).
    private static func powerOfTen(_ n: Int) -> Double {
        switch n {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        default: 1e15
        }
    }

    /// A decimal number as `String(Double)` writes it ("1763779200.25",
    /// "1e-05"): nil unless every byte is consumed. The common form (digits
    /// that make an integer up to 2^53, at most 15 decimals — stored times
    /// with microseconds are) is computed exactly here: such an integer
    /// divided by a power of ten that is itself exact is one correctly
    /// rounded IEEE division, the value `strtod` returns.
    /// Anything else goes to `strtod` from a stack copy (no String built;
    /// Swift programs run in the C locale).
    var double: Double? {
        guard count > 0, count < 64, let start = base.baseAddress else { return nil }
        let first = base[0]
        guard first == 0x2D || (first >= 0x30 && first <= 0x39) else { return nil }   // no spaces, no "nan"/"inf"
        if let quick = simpleDecimal { return quick }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { text -> Double? in
            guard let c = text.baseAddress else { return nil }
            memcpy(c, start, count)
            c[count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = strtod(c, &end)
            guard let end, end == c + count, value.isFinite else { return nil }
            return value
        }
    }
}
