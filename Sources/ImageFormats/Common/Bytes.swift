/// Bounds-checked reads over a borrowed buffer: every accessor returns nil
/// (or false, or an empty array) instead of reading past either end, so the
/// format readers can follow offsets taken from hostile input.
struct Bytes {
    let base: UnsafeBufferPointer<UInt8>
    init(_ base: UnsafeBufferPointer<UInt8>) { self.base = base }

    var count: Int { base.count }

    /// Runs `body` over an empty buffer.
    static func empty<T>(_ body: (Bytes) -> T) -> T {
        let none: [UInt8] = []
        return none.withUnsafeBufferPointer { body(Bytes($0)) }
    }

    /// The bytes from `offset` on (none when `offset` is past the end).
    func dropFirst(_ offset: Int) -> Bytes {
        Bytes(UnsafeBufferPointer(rebasing: base[min(max(0, offset), count)...]))
    }

    /// The byte at `i`, or nil outside the buffer.
    func at(_ i: Int) -> UInt8? { i >= 0 && i < count ? base[i] : nil }

    func starts(with prefix: [UInt8]) -> Bool { matches(prefix, at: 0) }

    func matches(_ bytes: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, bytes.count <= count, offset <= count - bytes.count else { return false }
        for (k, byte) in bytes.enumerated() where base[offset + k] != byte { return false }
        return true
    }

    /// `length` bytes from `offset`, or [] when they are not all there.
    func slice(_ offset: Int, _ length: Int) -> [UInt8] {
        guard offset >= 0, length >= 0, length <= count, offset <= count - length else { return [] }
        return Array(base[offset..<offset + length])
    }

    /// First offset in `from..<to` (clamped to the buffer) where `needle` starts.
    func firstIndex(of needle: [UInt8], from: Int = 0, to: Int? = nil) -> Int? {
        guard !needle.isEmpty else { return nil }
        let end = min(to ?? count, count) - needle.count
        var i = max(0, from)
        while i <= end {
            if matches(needle, at: i) { return i }
            i += 1
        }
        return nil
    }

    /// Last offset where `needle` starts, or nil.
    func lastIndex(of needle: [UInt8]) -> Int? {
        guard !needle.isEmpty else { return nil }
        var i = count - needle.count
        while i >= 0 {
            if matches(needle, at: i) { return i }
            i -= 1
        }
        return nil
    }

    private func has(_ i: Int, _ n: Int) -> Bool { i >= 0 && n <= count && i <= count - n }

    func u16be(_ i: Int) -> Int? { has(i, 2) ? Int(base[i]) << 8 | Int(base[i + 1]) : nil }
    func u16le(_ i: Int) -> Int? { has(i, 2) ? Int(base[i + 1]) << 8 | Int(base[i]) : nil }
    func u24le(_ i: Int) -> Int? {
        has(i, 3) ? Int(base[i]) | Int(base[i + 1]) << 8 | Int(base[i + 2]) << 16 : nil
    }
    func u32be(_ i: Int) -> Int? {
        has(i, 4) ? Int(base[i]) << 24 | Int(base[i + 1]) << 16 | Int(base[i + 2]) << 8 | Int(base[i + 3]) : nil
    }
    func u32le(_ i: Int) -> Int? {
        has(i, 4) ? Int(base[i + 3]) << 24 | Int(base[i + 2]) << 16 | Int(base[i + 1]) << 8 | Int(base[i]) : nil
    }
    func i32le(_ i: Int) -> Int32? { u32le(i).map { Int32(truncatingIfNeeded: $0) } }
    /// 64-bit values clamped to `Int.max` (they are offsets and sizes: too large means "past the end").
    func u64be(_ i: Int) -> Int? {
        guard let high = u32be(i), let low = u32be(i + 4) else { return nil }
        return high >= 1 << 31 ? Int.max : high << 32 | low
    }
    func u64le(_ i: Int) -> Int? {
        guard let low = u32le(i), let high = u32le(i + 4) else { return nil }
        return high >= 1 << 31 ? Int.max : high << 32 | low
    }
}
