#if canImport(Glibc)
import Glibc
#endif
import func Support.withUTF8Bytes

/// Writes the fields of a metadata file into a buffer the caller allocated
/// at the record's size bound (`CacheMetadata.encoded`).
struct MetadataWriter {
    private let start: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private(set) var count = 0

    init(_ start: UnsafeMutablePointer<UInt8>, capacity: Int) {
        self.start = start
        self.capacity = capacity
    }

    // `byte`, `raw` and `copy` are inlined: out of line, each call (some 33
    // per record) cost ~50 instructions around its store or memcpy.
    @inline(__always)
    mutating func byte(_ byte: UInt8) {
        precondition(count < capacity, "metadata record outgrew its bound")
        start[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func raw(_ text: StaticString) {
        copy(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    private mutating func copy(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count <= capacity - count, "metadata record outgrew its bound")
        if let source = bytes.baseAddress, bytes.count > 0 {
            (start + count).update(from: source.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        count += bytes.count
    }

    /// `key value\n`.
    mutating func line(_ key: StaticString, _ text: String) {
        raw(key)
        byte(0x20)
        value(text)
        byte(0x0A)
    }

    /// A value given as its bytes, on one line (as `value`).
    mutating func value(bytes: UnsafeBufferPointer<UInt8>) {
        let first = count
        copy(UnsafeRawBufferPointer(bytes))
        endLine(from: first)
    }

    /// `key value\n`, the value given as its bytes.
    mutating func line(_ key: StaticString, bytes: UnsafeBufferPointer<UInt8>) {
        raw(key)
        byte(0x20)
        let first = count
        copy(UnsafeRawBufferPointer(bytes))
        endLine(from: first)
        byte(0x0A)
    }

    /// `key digits\n`.
    mutating func line(_ key: StaticString, _ number: Int64) {
        raw(key)
        byte(0x20)
        if number < 0 { byte(0x2D) }
        digits(number.magnitude)
        byte(0x0A)
    }

    mutating func line(_ key: StaticString, unsigned number: UInt64) {
        raw(key)
        byte(0x20)
        digits(number)
        byte(0x0A)
    }

    /// `key seconds\n`, exactly as `Double.description` writes it
    /// ("1763779200.25", "1763779200.0"), so that the decoder reads back
    /// this very value. The clock's times (`currentUnixTime`: whole
    /// microseconds) are written as the integer and up to six decimals with
    /// no formatting engine: between 1 and 2^32 seconds, such a value's
    /// digits are its shortest round-trip form, which is what
    /// `description` prints. Any other value goes through `description`.
    mutating func line(_ key: StaticString, time: Double) {
        raw(key)
        byte(0x20)
        let magnitude = time.magnitude
        let micros = (magnitude * 1e6).rounded()
        if magnitude >= 1, magnitude < 4_294_967_296, micros / 1e6 == magnitude {
            let whole = UInt64(micros)
            if time < 0 { byte(0x2D) }
            digits(whole / 1_000_000)
            let fraction = whole % 1_000_000
            if fraction == 0 {
                raw(".0")
            } else {
                // "1" and six places, the "1" made the point, the trailing zeros taken back.
                digits(1_000_000 + fraction)
                start[count - 7] = 0x2E
                while start[count - 1] == 0x30 { count -= 1 }
            }
        } else {
            value(time.description)
        }
        byte(0x0A)
    }

    /// The decimal digits of `number`. The length from a tree of
    /// comparisons (`decimalLength`: four or five, where counting powers of
    /// ten took one multiplication per digit), then two digits per division
    /// by 100, from the last, each pair copied from `pairs` (one load and
    /// one store, where dividing the pair by 10 took a multiplication each).
    private mutating func digits(_ number: UInt64) {
        let length = Self.decimalLength(number)
        precondition(length <= capacity - count, "metadata record outgrew its bound")
        let table = UnsafeRawPointer(Self.pairs.utf8Start)
        var n = number
        var i = count + length
        while n >= 100 {
            let next = n / 100
            let pair = Int(truncatingIfNeeded: n &- next &* 100)
            i -= 2
            UnsafeMutableRawPointer(start + i).storeBytes(of: table.loadUnaligned(fromByteOffset: 2 * pair, as: UInt16.self),
                                                          as: UInt16.self)
            n = next
        }
        let last = Int(truncatingIfNeeded: n)
        if last >= 10 {
            UnsafeMutableRawPointer(start + i - 2).storeBytes(of: table.loadUnaligned(fromByteOffset: 2 * last, as: UInt16.self),
                                                              as: UInt16.self)
        } else {
            start[i - 1] = 0x30 &+ UInt8(truncatingIfNeeded: last)
        }
        count += length
    }

    /// "00" to "99", the two digits of each number below 100 at twice its offset.
    /// (Computed: a stored `static let` would be read through its once-token.)
    private static var pairs: StaticString {
        """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """
    }

    /// How many decimal digits `number` has, 1 to 20. Inlined into `digits` (a call each, ~11 a record).
    @inline(__always)
    static func decimalLength(_ number: UInt64) -> Int {
        if number < 100_000_000 {
            if number < 10_000 { return number < 100 ? (number < 10 ? 1 : 2) : (number < 1_000 ? 3 : 4) }
            return number < 1_000_000 ? (number < 100_000 ? 5 : 6) : (number < 10_000_000 ? 7 : 8)
        }
        if number < 10_000_000_000_000_000 {
            if number < 1_000_000_000_000 {
                return number < 10_000_000_000 ? (number < 1_000_000_000 ? 9 : 10) : (number < 100_000_000_000 ? 11 : 12)
            }
            return number < 100_000_000_000_000 ? (number < 10_000_000_000_000 ? 13 : 14)
                : (number < 1_000_000_000_000_000 ? 15 : 16)
        }
        return number < 1_000_000_000_000_000_000 ? (number < 100_000_000_000_000_000 ? 17 : 18)
            : (number < 10_000_000_000_000_000_000 ? 19 : 20)
    }

    /// `header` of each of `headers`, read in the array's buffer (no copy of a header).
    mutating func headers(_ key: StaticString, _ headers: [CacheMetadata.Header]) {
        headers.withUnsafeBufferPointer { list in
            for i in list.indices { header(key, list[i]) }
        }
    }

    /// `h Name value\n` (or `v`): a name is one word, its spaces become "-".
    mutating func header(_ key: StaticString, _ header: CacheMetadata.Header) {
        raw(key)
        byte(0x20)
        value(header.name, spaces: 0x2D)
        byte(0x20)
        let first = count
        header.withValueBytes { copy(UnsafeRawBufferPointer($0)) }
        endLine(from: first)
        byte(0x0A)
    }

    /// `header`, the name and value given as their bytes (a record's lines).
    mutating func header(_ key: StaticString, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        raw(key)
        byte(0x20)
        let nameStart = count
        copy(name)
        oneWord(from: nameStart)
        byte(0x20)
        let first = count
        copy(value)
        endLine(from: first)
        byte(0x0A)
    }

    /// A value on one line: CR and LF become spaces (they would start a new
    /// field); with `spaces` given, spaces too become that byte. Copied in
    /// one piece, then patched in place.
    mutating func value(_ text: String, spaces: UInt8 = 0x20) {
        let first = count
        withUTF8Bytes(of: text) { copy(UnsafeRawBufferPointer($0)) }
        if spaces == 0x20 {
            endLine(from: first)
            return
        }
        oneWord(from: first, spaces: spaces)
    }

    /// LF, CR and spaces written since `first` become `spaces` ("-": a header's name is one word).
    private func oneWord(from first: Int, spaces: UInt8 = 0x2D) {
        for i in first..<count {
            let byte = start[i]
            if byte == 0x0A || byte == 0x0D || byte == 0x20 { start[i] = spaces }
        }
    }

    /// CR and LF written since `first` become spaces: spaces stay, and only
    /// CR and LF (rare) are looked for, by memchr. Inlined, as it was when
    /// `value` held it (out of line it cost a 304's rewrite ~330 instructions).
    @inline(__always)
    private func endLine(from first: Int) {
        patch(0x0A, from: first)
        patch(0x0D, from: first)
    }

    /// Every `byte` written since `first` becomes a space.
    private func patch(_ byte: UInt8, from first: Int) {
        var from = first
        while from < count, let found = memchr(start + from, Int32(byte), count - from) {
            let at = found.assumingMemoryBound(to: UInt8.self)
            at.pointee = 0x20
            from = at - start + 1
        }
    }
}
